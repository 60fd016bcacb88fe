"""The Quart application on asyncio: HTTP requests in, the engine's answers out.

:func:`a2a_blueprint` mounts A2A into any Quart application at any path; :func:`create_app` is a
ready application with just that blueprint, which also runs the engine for as long as it serves.
"""

import asyncio

from quart import Quart

from a2a_adapters._engine import Engine
from a2a_adapters._lifecycle import ENGINES
from a2a_adapters._quart_glue import a2a_blueprint, serve_a2a

__all__ = ["a2a_blueprint", "create_app", "run_engine"]


def run_engine(app: Quart, engine: Engine) -> None:
    """Run ``engine`` while ``app`` serves: started before the first request, closed after."""
    runner: list[asyncio.Task[None]] = []
    app.extensions.setdefault(ENGINES, []).append(engine)

    @app.before_serving
    async def start_engine() -> None:
        runner.append(asyncio.get_running_loop().create_task(engine.run(), name="a2a engine"))
        await engine.wait_ready()

    @app.after_serving
    async def stop_engine() -> None:
        await engine.aclose()
        await asyncio.gather(*runner, return_exceptions=True)


def create_app(engine: Engine, *, root_path: str = "") -> Quart:
    """A Quart application serving A2A at its root; ``root_path`` is where a proxy in front
    serves it (``/agents``), if not at the root of its host."""
    app = Quart("a2a_adapters")
    serve_a2a(app, engine, root_path)
    run_engine(app, engine)
    return app
