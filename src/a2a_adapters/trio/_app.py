"""The QuartTrio application on trio: HTTP requests in, the engine's answers out.

:func:`a2a_blueprint` mounts A2A into any QuartTrio application at any path; :func:`create_app`
is a ready application with just that blueprint, which also runs the engine in the application's
nursery for as long as it serves.
"""

from quart_trio import QuartTrio

from a2a_adapters._engine import Engine
from a2a_adapters._lifecycle import ENGINES
from a2a_adapters._quart_glue import a2a_blueprint, serve_a2a

__all__ = ["a2a_blueprint", "create_app", "run_engine"]


def run_engine(app: QuartTrio, engine: Engine) -> None:
    """Run ``engine`` in ``app``'s nursery while it serves; close it when serving stops."""
    app.extensions.setdefault(ENGINES, []).append(engine)
    # QuartTrio gives what runs in its nursery (the engine, and so the agents) this long once
    # shutdown begins, then cancels it: leave the engine its whole graceful shutdown.
    budget = app.config.get("BACKGROUND_TASK_SHUTDOWN_TIMEOUT")
    if budget is not None and budget < engine.shutdown_budget:
        app.config["BACKGROUND_TASK_SHUTDOWN_TIMEOUT"] = engine.shutdown_budget

    @app.before_serving
    async def start_engine() -> None:
        await app.nursery.start(engine.run)

    @app.after_serving
    async def stop_engine() -> None:
        await engine.aclose()


def create_app(engine: Engine, *, root_path: str = "") -> QuartTrio:
    """A QuartTrio application serving A2A at its root; ``root_path`` is where a proxy in front
    serves it (``/agents``), if not at the root of its host."""
    app = QuartTrio("a2a_adapters")
    serve_a2a(app, engine, root_path)
    run_engine(app, engine)
    return app
