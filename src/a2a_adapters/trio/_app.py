"""The QuartTrio application on trio: HTTP requests in, the engine's answers out.

:func:`a2a_blueprint` mounts A2A into any QuartTrio application at any path; :func:`create_app`
is a ready application with just that blueprint, which also runs the engine in the application's
nursery for as long as it serves.
"""

from quart_trio import QuartTrio

from a2a_adapters._engine import Engine
from a2a_adapters._fastpath import serving_chain
from a2a_adapters._lifecycle import ENGINES
from a2a_adapters._quart_glue import a2a_blueprint

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
    # Quart stops buffering a body past this size, so a huge body is never read into memory.
    app.config["MAX_CONTENT_LENGTH"] = engine.core.config.max_body_bytes
    app.register_blueprint(a2a_blueprint(engine))
    # A2A's endpoints skip Quart's request machinery; the rest of the app is Quart's as usual.
    # Every request, A2A's or Quart's, gets its line in the access log, and CORS if it is on.
    app.asgi_app = serving_chain(app.asgi_app, engine, root_path)  # type: ignore[method-assign,assignment]
    run_engine(app, engine)
    return app
