"""The core as one object: the HTTP front, the reducer and the codec behind one small API.

An adapter needs five calls, in this order, for every request:

1. :meth:`Core.handle_http` answers at once, or returns a :class:`Dispatch`;
2. :meth:`Core.needs` says what to read from the store for the dispatched call;
3. :meth:`Core.decide` decides, given what was read, the time and an id source;
4. the adapter commits the decision's writes (retrying from 2 on a version conflict) and
   performs its effects;
5. :meth:`Core.render` turns the reply into an HTTP response (for a blocking send, after
   :meth:`Core.settled_reply` once the task settled).

Agent output and ticks go through steps 2 to 4 only.
"""

from collections.abc import Mapping

from a2a_core._config import CoreConfig
from a2a_core._errors import A2AError, UsageError
from a2a_core.decide._effects import AwaitTask, Decision, Fail, Notify, Push, Respond
from a2a_core.decide._inputs import Caller, Input, World
from a2a_core.decide._reducer import Reducer
from a2a_core.front._cors import cors_headers, preflight
from a2a_core.front._grpc import PayloadCodec
from a2a_core.front._health import Health, Probe, health_response, probe_for
from a2a_core.front._http import Dispatch, HttpFront, HttpRequest, HttpResponse
from a2a_core.model._card import AgentCard
from a2a_core.model._records import TaskRecord
from a2a_core.store._contract import LoggedEvent, Reads, Snapshot
from a2a_core.wire._v1 import V1Codec

__all__ = ["Core"]


class Core:
    """A sans-IO A2A server: no sockets, no clock, no event loop; just decisions."""

    def __init__(self, config: CoreConfig, *, grpc: PayloadCodec | None = None) -> None:
        """``grpc`` turns gRPC message bytes into ProtoJSON and back: with one, the core
        serves the gRPC binding too (see ``CoreConfig.grpc_port``)."""
        if config.grpc_port is not None and grpc is None:
            raise UsageError("config.grpc_port says gRPC is served: pass its payload codec (grpc=)")
        self.config = config
        self.codec = V1Codec()
        self._reducer = Reducer(config, self.codec)
        self._front = HttpFront(config, self.codec, grpc)

    def handle_http(
        self, request: HttpRequest, caller: Caller, base_url: str
    ) -> HttpResponse | Dispatch:
        """Route an HTTP request. ``base_url`` is where the client reached the A2A root."""
        return self._front.route(request, caller, base_url)

    def serves(self, method: str, path: str) -> bool:
        """Whether ``path`` (as written, below the A2A root) is one of A2A's endpoints."""
        return self._front.serves(method, path)

    def health_probe(self, method: str, path: str) -> Probe | None:
        """Which health probe ``method`` and ``path`` (at the server's root) ask for, if any:
        the probes are answered before, and apart from, A2A's routes."""
        return probe_for(method, path)

    def health(self, probe: Probe, health: Health, *, head: bool = False) -> HttpResponse:
        """The answer to ``probe``, given what the transport found out (``health``)."""
        return health_response(probe, health, head=head)

    def cors_preflight(self, method: str, headers: Mapping[str, str]) -> HttpResponse | None:
        """The answer to a CORS preflight, if the request (its method and lower-case headers)
        is one and CORS is on; ``None``: it goes on to be served."""
        return preflight(method, headers, self.config.cors_origins)

    def cors_headers(self, headers: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
        """The CORS headers for the answer to a request with these (lower-case) headers."""
        return cors_headers(headers, self.config.cors_origins)

    def is_public(self, request: HttpRequest) -> bool:
        """Whether ``request`` needs no authentication (the public agent card)."""
        return self._front.is_public(request)

    def too_large(self, path: str = "") -> HttpResponse:
        """The answer for a body the adapter refused to read past ``max_body_bytes``; give the
        request's ``path`` so that an HTTP+JSON route gets its own error format."""
        return self._front.too_large(path)

    def unauthenticated(self, request: HttpRequest, challenges: tuple[str, ...]) -> HttpResponse:
        """The 401 for a request whose credentials the adapter could not verify, in the
        request's binding, with ``challenges`` as its ``WWW-Authenticate`` values."""
        return self._front.unauthenticated(request, challenges)

    def notification(self, push: Push, attempts: int = 0) -> Notify:
        """The webhook delivery for a :class:`Push` effect (its body and headers)."""
        return self._front.notification(push, attempts)

    def internal_error(self, path: str, message: str) -> HttpResponse:
        """The answer for a request the adapter failed to handle through no fault of the
        client's (a store that failed, a bug): a protocol error in the binding of ``path``,
        never a bare 500 or a traceback."""
        return self._front.internal_error(path, message)

    def needs(self, inp: Input) -> Reads:
        """What to read from the store before :meth:`decide`."""
        return self._reducer.needs(inp)

    def decide(self, inp: Input, snapshot: Snapshot, ctx: World) -> Decision:
        """Decide ``inp`` over ``snapshot`` (which must answer :meth:`needs`)."""
        return self._reducer.decide(inp, snapshot, ctx)

    def settled_reply(self, wait: AwaitTask, record: TaskRecord) -> Respond:
        """The reply of a blocking send whose task has now settled."""
        return self._reducer.settled_reply(wait, record)

    def render(self, dispatch: Dispatch, reply: Respond | Fail) -> HttpResponse:
        """The HTTP response for a dispatched call's reply."""
        return self._front.render(dispatch, reply)

    def stream_headers(self, dispatch: Dispatch | None = None) -> tuple[tuple[str, str], ...]:
        """The headers of a streamed response: ``text/event-stream`` with no caching, or, for a
        gRPC call, gRPC's; for ``dispatch``, with the extensions active for its call
        (``A2A-Extensions``)."""
        return self._front.stream_headers(dispatch)

    def stream_end(
        self, dispatch: Dispatch, error: A2AError | None = None
    ) -> tuple[tuple[bytes, ...], tuple[tuple[str, str], ...]]:
        """The last frames and the trailers of a stream that ends (having failed with
        ``error``, if given): an SSE error event, or gRPC's status trailers."""
        return self._front.stream_end(dispatch, error)

    def render_event(self, dispatch: Dispatch, frame: LoggedEvent) -> bytes:
        """One SSE frame of a stream's event."""
        return self._front.render_event(dispatch, frame)

    def event_payload(self, dispatch: Dispatch, frame: LoggedEvent) -> bytes:
        """One stream event's JSON alone, without SSE framing (for a transport that is not
        HTTP); empty when the client's dialect has no such event."""
        return self._front.event_payload(dispatch, frame)

    def render_stream_error(self, dispatch: Dispatch, error: A2AError) -> bytes:
        """The final SSE frame of a stream that failed after it started."""
        return self._front.render_stream_error(dispatch, error)

    def card(self, base_url: str) -> AgentCard:
        """The public agent card as served from ``base_url``."""
        return self._front.cards.card(base_url)
