"""CORS on the way in and out, for every route of the application (the core decides what is
allowed: ``a2a_core.front._cors``). Preflights are answered here, before anything else sees them:
they carry no credentials, and are no A2A request."""

from a2a_core import Core

from ._asgi import ASGIApp, Message, Receive, Scope, Send, encoded

__all__ = ["Cors"]


class Cors:
    """ASGI middleware: ``core``'s CORS answers and headers around ``app``."""

    def __init__(self, app: ASGIApp, core: Core) -> None:
        self._app = app
        self._core = core

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self._app(scope, receive, send)
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in scope["headers"]
        }
        answer = self._core.cors_preflight(scope["method"], headers)
        if answer is not None:
            start = {"type": "http.response.start", "status": answer.status}
            await send({**start, "headers": encoded(answer.headers)})
            await send({"type": "http.response.body", "body": answer.body})
            return None
        extra = encoded(self._core.cors_headers(headers))
        if not extra:
            return await self._app(scope, receive, send)

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        return await self._app(scope, receive, sending)
