"""Traces and metrics through the OpenTelemetry API (the ``otel`` extra), and every name they use.

The library depends on ``opentelemetry-api`` alone, never on the SDK: an application that wants
telemetry configures a tracer and a meter provider (its own code, or ``opentelemetry-instrument``)
and the adapters use them. What is emitted (README, "Telemetry"):

* a ``SERVER`` span per request to the A2A routes, continuing the caller's trace (W3C
  ``traceparent`` from the HTTP headers, which are gRPC's metadata too), named after the A2A
  operation as RPC spans are (``lf.a2a.v1.A2AService/SendMessage``), with the RPC attributes;
  a stream's span lasts as long as the stream;
* an ``INTERNAL`` span per agent run, a child of the request whose decision started it and
  linked to it; it is the current span while the agent runs, so the agent's own spans (an LLM
  client's, say) are its children;
* a ``CLIENT`` span per push delivery attempt, whose context goes to the webhook in
  ``traceparent``;
* the metrics of :data:`METRICS`.

The cost when nothing is configured is what decides the shape. The API's own no-op spans cost
microseconds each (STACK.md: ~4.8 µs), a few per request, so while the global providers are the
API's placeholders this module does not call the API at all: :attr:`Telemetry.active` reads
the two module globals that hold the providers the application set. (Even the API's public
getters cost ~1 µs each, measured: each looks up an environment variable; so the globals are
read directly, with the getters as the fallback should a later API rename them.) Once an
application sets a provider (which it may do after the server started) telemetry is on for
good, as the API allows a global provider to be set once. Without ``opentelemetry-api``
installed nothing is imported and nothing is emitted.

Context does not cross the engine by itself: agent runs and push deliveries are performed by
tasks started before the request that caused them. So the engine hands the request's span
context to the run it starts (the machine says which request started a run:
``StartRun.exchange``), and the push sender keeps the context current when a notification was
queued (the run's, for the events a run produced).
"""

import time
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import attrs

from a2a_core import Task, TaskStatusUpdateEvent
from a2a_core.store import Put, Reads, Snapshot, SyncStore, Write
from a2a_core.transport import HttpRequest, HttpResponse, Notify, StartRun

from ._streaming import HttpStream

try:
    from opentelemetry import context as otel_context
    from opentelemetry import metrics, propagate, trace
    from opentelemetry.metrics import NoOpMeterProvider
    from opentelemetry.metrics import _internal as metrics_internal
    from opentelemetry.trace import Link, NoOpTracerProvider, ProxyTracerProvider, SpanKind
    from opentelemetry.trace.status import Status, StatusCode
except ImportError:  # the otel extra is not installed: no telemetry at all
    OTEL = False
else:
    OTEL = True

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import Span, SpanContext, TracerProvider

__all__ = ["METRICS", "SCOPE", "Telemetry"]

#: The instrumentation scope of every span and instrument.
SCOPE = "a2a_adapters"
#: The RPC service every A2A operation belongs to, whatever the binding (gRPC's, verbatim).
SERVICE = "lf.a2a.v1.A2AService"
#: ``rpc.method`` for a request that named no operation the server knows (RPC conventions).
OTHER = "_OTHER"

# Attribute names: OpenTelemetry's RPC and JSON-RPC conventions where they fit, ``a2a.*`` for
# the rest (no A2A conventions are accepted yet).
RPC_SYSTEM = "rpc.system.name"
RPC_METHOD = "rpc.method"
RPC_STATUS = "rpc.response.status_code"
JSONRPC_ID = "jsonrpc.request.id"
ERROR_TYPE = "error.type"
HTTP_METHOD = "http.request.method"
HTTP_STATUS = "http.response.status_code"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
BINDING = "a2a.protocol.binding"
VERSION = "a2a.protocol.version"
TASK_ID = "a2a.task_id"
CONTEXT_ID = "a2a.context_id"
RUN = "a2a.run"
SKILL = "a2a.skill_id"
RUN_STOPPED = "a2a.run.stopped"
STATE = "a2a.task.state"
PUSH_CONFIG = "a2a.push.config_id"
PUSH_EVENT = "a2a.push.event_seq"
PUSH_ATTEMPT = "a2a.push.attempt"
PUSH_OUTCOME = "a2a.push.outcome"

#: ``google.rpc.Code`` names by number (what ``rpc.response.status_code`` says).
GRPC_CODES = (
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
)

#: Span names other than the requests' (which are ``{SERVICE}/{operation}``).
RUN_SPAN = "a2a.agent.run"
PUSH_SPAN = "a2a.push"

REQUEST_DURATION = "a2a.server.request.duration"
ACTIVE_STREAMS = "a2a.server.active_streams"
TRANSITIONS = "a2a.server.task.transitions"
CONFLICTS = "a2a.server.store.conflicts"
PUSH_ATTEMPTS = "a2a.server.push.attempts"
#: Every instrument: name, unit, what it measures.
METRICS = {
    REQUEST_DURATION: (
        "s",
        "How long requests took (a stream: how long it was open), by rpc.method, "
        "a2a.protocol.binding, rpc.response.status_code and error.type",
    ),
    ACTIVE_STREAMS: ("{stream}", "Streams open now, by rpc.method and a2a.protocol.binding"),
    TRANSITIONS: ("{transition}", "Task status changes committed, by a2a.task.state entered"),
    CONFLICTS: ("{conflict}", "Commits the store refused: another writer changed the task first"),
    PUSH_ATTEMPTS: ("{attempt}", "Push delivery attempts, by a2a.push.outcome"),
}

#: Stand-ins for the global providers that record nothing (the API's placeholders).
_IDLE_TRACING: tuple[type, ...] = (ProxyTracerProvider, NoOpTracerProvider) if OTEL else ()
_IDLE_METERS: tuple[type, ...] = (
    # The API's placeholder meter provider has no public name; without it, meters count as set.
    tuple(
        kind
        for kind in (NoOpMeterProvider, getattr(metrics_internal, "_ProxyMeterProvider", None))
        if isinstance(kind, type)
    )
    if OTEL
    else ()
)


#: Whether the API keeps the providers an application set where :attr:`Telemetry.active`
#: looks first (``_TRACER_PROVIDER`` and ``_METER_PROVIDER``, ``None`` until then). An API
#: that renamed them is looked at the long way (asking for the providers) until one is set.
_GLOBALS_KNOWN = (
    OTEL and hasattr(trace, "_TRACER_PROVIDER") and hasattr(metrics_internal, "_METER_PROVIDER")
)


def _version() -> str:
    try:
        return metadata.version("a2a-sansio")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return ""


class Telemetry:
    """The adapters' spans and instruments, over the given providers (by default the global
    ones, as an application or ``opentelemetry-instrument`` configured them).

    Explicit providers are always on (tests pass the SDK's with in-memory exporters); the
    global ones only once something other than the API's placeholders is set. With
    ``enabled=False`` nothing is ever emitted, whatever is configured.
    """

    def __init__(
        self,
        *,
        tracer_provider: "TracerProvider | None" = None,
        meter_provider: "MeterProvider | None" = None,
        enabled: bool = True,
    ) -> None:
        self._enabled = enabled
        self._explicit = tracer_provider is not None or meter_provider is not None or not enabled
        self._on = OTEL and self._explicit and enabled
        #: Off for good: no OpenTelemetry, or turned off, or explicit providers (then on).
        self._settled = not OTEL or self._explicit
        if not (OTEL and enabled):
            return
        version = _version()
        # The global getters also load a provider named by the environment
        # (OTEL_PYTHON_TRACER_PROVIDER): after them, the globals say what is configured.
        if tracer_provider is None:
            self._tracer = trace.get_tracer(SCOPE, version)
        else:
            self._tracer = tracer_provider.get_tracer(SCOPE, version)
        meter = (
            metrics.get_meter(SCOPE, version)
            if meter_provider is None
            else meter_provider.get_meter(SCOPE, version)
        )
        # The global meter delegates to a provider set later: instruments are made once.
        unit, about = METRICS[REQUEST_DURATION]
        self._duration = meter.create_histogram(REQUEST_DURATION, unit, about)
        unit, about = METRICS[ACTIVE_STREAMS]
        self._streams = meter.create_up_down_counter(ACTIVE_STREAMS, unit, about)
        unit, about = METRICS[TRANSITIONS]
        self._transitions = meter.create_counter(TRANSITIONS, unit, about)
        unit, about = METRICS[CONFLICTS]
        self._conflicts = meter.create_counter(CONFLICTS, unit, about)
        unit, about = METRICS[PUSH_ATTEMPTS]
        self._pushes = meter.create_counter(PUSH_ATTEMPTS, unit, about)

    @property
    def active(self) -> bool:
        """Whether anything would record what is emitted."""
        # Looked at three times a send: attribute reads only, while nothing is set.
        if self._on:
            return True
        if self._settled or (
            _GLOBALS_KNOWN
            and trace._TRACER_PROVIDER is None
            and metrics_internal._METER_PROVIDER is None
        ):
            return False
        # Something was set (rarely looked at: only until it records something).
        tracing = not isinstance(trace.get_tracer_provider(), _IDLE_TRACING)
        if tracing or not isinstance(metrics.get_meter_provider(), _IDLE_METERS):
            self._on = True  # a global provider is set once and for all
        return self._on

    # --- requests -----------------------------------------------------------------------------

    def request(self, head: HttpRequest) -> "Exchange | None":
        """The span of a request whose ``head`` just arrived, continuing the caller's trace
        (``None`` when telemetry is off). Enter it around the handling of the request."""
        if not self.active:
            return None
        parent = propagate.extract(head.headers)
        span = self._tracer.start_span(
            head.method, context=parent, kind=SpanKind.SERVER, attributes={HTTP_METHOD: head.method}
        )
        return Exchange(self, span, trace.set_span_in_context(span, parent))

    def origin(self) -> "SpanContext | None":
        """The span context current now, if telemetry is on and one is (a request's)."""
        if not self.active:
            return None
        found = trace.get_current_span().get_span_context()
        return found if found.is_valid else None

    def context(self) -> "Context | None":
        """The whole context current now (``None`` when telemetry is off), to carry into work
        that a long-lived task will do later."""
        return otel_context.get_current() if self.active else None

    # --- agent runs ---------------------------------------------------------------------------

    def run(self, start: StartRun, origin: "SpanContext | None") -> "RunSpan | _Untraced":
        """The span of one agent run, a child of the request that started it (``origin``) and
        linked to it. Enter it around the run: the agent's own spans are its children."""
        if not self.active:
            return UNTRACED
        context = start.context
        attributes: dict[str, Any] = {
            TASK_ID: start.task_id,
            CONTEXT_ID: context.context_id,
            RUN: start.run,
        }
        if context.skill_id:
            attributes[SKILL] = context.skill_id
        parent = None
        links: Sequence[Link] = ()
        if origin is not None:
            parent = trace.set_span_in_context(trace.NonRecordingSpan(origin))
            links = (Link(origin),)
        span = self._tracer.start_span(
            RUN_SPAN,
            context=parent if parent is not None else otel_context.Context(),
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            links=links,
        )
        return RunSpan(span)

    # --- push deliveries ----------------------------------------------------------------------

    def push(
        self, notify: Notify, attempt: int, parent: "Context | None"
    ) -> "PushSpan | _Untraced":
        """The span of one delivery attempt of ``notify`` (its ``attempt``-th), a child of
        ``parent`` (the context current when it was queued)."""
        if not self.active:
            return UNTRACED
        span = self._tracer.start_span(
            PUSH_SPAN,
            context=parent if parent is not None else otel_context.Context(),
            kind=SpanKind.CLIENT,
            attributes={
                HTTP_METHOD: "POST",
                TASK_ID: notify.task_id,
                PUSH_CONFIG: notify.config_id,
                PUSH_EVENT: notify.seq,
                PUSH_ATTEMPT: attempt,
            },
        )
        return PushSpan(self, span)

    # --- the store ----------------------------------------------------------------------------

    def committed(self, writes: Sequence[Write]) -> None:
        """A commit of ``writes`` succeeded: count the status changes it logged."""
        if not self.active:
            return
        for write in writes:
            if isinstance(write, Put):
                for logged in write.events:
                    # A new task is logged as itself; a change of status as an update.
                    if isinstance(logged.event, Task | TaskStatusUpdateEvent):
                        self._transitions.add(1, {STATE: logged.event.status.state.value})

    def conflicted(self) -> None:
        """The store refused a commit: a version it was decided on no longer held."""
        if self.active:
            self._conflicts.add(1)

    def counted(self, store: SyncStore) -> SyncStore:
        """``store`` (one the machine calls itself), with its commits counted."""
        return _CountedStore(store, self) if OTEL and self._enabled else store


class Exchange:
    """The span of one request (see :meth:`Telemetry.request`): entered around its handling,
    told its answer (:meth:`answered`), ended when the answer has gone (a stream's end)."""

    def __init__(self, telemetry: Telemetry, span: "Span", context: "Context") -> None:
        self._telemetry = telemetry
        self._span = span
        self._context = context
        self._token: object = None
        self._started = time.perf_counter()
        self._metric: dict[str, Any] = {RPC_METHOD: OTHER}
        self._ended = False
        self._left = False

    def __enter__(self) -> "Exchange":
        self._token = otel_context.attach(self._context)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _: Any
    ) -> None:
        otel_context.detach(self._token)  # type: ignore[arg-type]
        if error is not None:
            name = type(error).__qualname__
            self._span.set_attribute(ERROR_TYPE, name)
            self._metric[ERROR_TYPE] = name
            # A client that left, or a cancellation, is no fault of the server's.
            if isinstance(error, Exception) and not self._left:
                self._span.record_exception(error)
                self._span.set_status(Status(StatusCode.ERROR, name))
            self._end()

    def client_left(self) -> None:
        """The client went away before its request was whole: nothing was decided."""
        self._left = True

    def answered(self, response: HttpResponse | HttpStream) -> HttpResponse | HttpStream:
        """Describe the request by its answer; a stream's span ends with the stream."""
        span = self._span
        served = response.served
        attributes: dict[str, Any] = {HTTP_STATUS: response.status}
        if response.task_id:
            attributes[TASK_ID] = response.task_id
        metric = self._metric
        if served is not None:
            if served.operation:
                method = f"{SERVICE}/{served.operation}"
                span.update_name(method)
                metric[RPC_METHOD] = attributes[RPC_METHOD] = method
            attributes[RPC_SYSTEM] = "a2a"
            metric[BINDING] = attributes[BINDING] = served.binding.value
            if served.version:
                attributes[VERSION] = served.version
            if served.context_id:
                attributes[CONTEXT_ID] = served.context_id
            if served.rpc_id is not None:
                attributes[JSONRPC_ID] = str(served.rpc_id)
            error = served.error
            status = "OK" if error is None else error.grpc
            metric[RPC_STATUS] = attributes[RPC_STATUS] = status
            if error is not None:
                metric[ERROR_TYPE] = attributes[ERROR_TYPE] = error.reason
                if error.http >= 500:  # the server's fault, not the caller's
                    span.set_status(Status(StatusCode.ERROR, error.reason))
        elif response.status >= 400:
            metric[ERROR_TYPE] = attributes[ERROR_TYPE] = str(response.status)
            if response.status >= 500:
                span.set_status(Status(StatusCode.ERROR))
        span.set_attributes(attributes)
        if not isinstance(response, HttpStream):
            self._end()
            return response
        streams = {k: v for k, v in metric.items() if k in (RPC_METHOD, BINDING)}
        return attrs.evolve(response, body=self._following(response, streams))

    async def _following(
        self, stream: HttpStream, streams: Mapping[str, Any]
    ) -> AsyncGenerator[bytes, None]:
        # Counted once it is being sent: a stream never started is never counted open.
        self._telemetry._streams.add(1, streams)
        try:
            async for chunk in stream.body:
                yield chunk
        finally:
            try:
                await stream.body.aclose()
            finally:
                self._telemetry._streams.add(-1, streams)
                # A gRPC stream that failed after it started says so in its trailers only.
                grpc = dict(stream.trailers).get("grpc-status", "0")
                if grpc != "0":
                    number = int(grpc) if grpc.isdigit() else -1
                    name = GRPC_CODES[number] if 0 <= number < len(GRPC_CODES) else grpc
                    self._span.set_attribute(RPC_STATUS, name)
                    self._metric[RPC_STATUS] = name
                self._end()

    def _end(self) -> None:
        if self._ended:
            return
        self._ended = True
        self._telemetry._duration.record(time.perf_counter() - self._started, self._metric)
        self._span.end()


class RunSpan:
    """The span of one agent run (see :meth:`Telemetry.run`)."""

    def __init__(self, span: "Span") -> None:
        self._span = span
        self._token: object = None

    def __enter__(self) -> "RunSpan":
        self._token = otel_context.attach(trace.set_span_in_context(self._span))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _: Any
    ) -> None:
        otel_context.detach(self._token)  # type: ignore[arg-type]
        if error is not None and not isinstance(error, Exception):
            self._span.set_attribute(RUN_STOPPED, True)  # cancelled: the machine stopped it
        self._span.end()

    def failed(self, error: BaseException, asked_for_input: bool) -> None:
        """The agent raised ``error`` (``asked_for_input``: the documented way to ask for
        input, which is no failure)."""
        if asked_for_input:
            return
        self._span.record_exception(error)
        self._span.set_attribute(ERROR_TYPE, type(error).__qualname__)
        self._span.set_status(Status(StatusCode.ERROR, type(error).__qualname__))


class PushSpan:
    """The span of one push delivery attempt (see :meth:`Telemetry.push`)."""

    def __init__(self, telemetry: Telemetry, span: "Span") -> None:
        self._telemetry = telemetry
        self._span = span
        self._outcome = "error"

    def __enter__(self) -> "PushSpan":
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _: Any
    ) -> None:
        if error is not None:
            self._span.record_exception(error)
            self._span.set_status(Status(StatusCode.ERROR, type(error).__qualname__))
        self._telemetry._pushes.add(1, {PUSH_OUTCOME: self._outcome})
        self._span.end()

    def sending(self, url: str, headers: dict[str, str]) -> None:
        """The attempt goes to ``url`` with ``headers``: ``traceparent`` is added to them."""
        parts = urlsplit(url)
        self._span.set_attributes(
            {SERVER_ADDRESS: parts.hostname or "", SERVER_PORT: parts.port or 0}
        )
        propagate.inject(headers, context=trace.set_span_in_context(self._span))

    def ended(self, outcome: str, status: int | None = None, error: str = "") -> None:
        """How the attempt fared: ``outcome`` (delivered; retry: it failed and will be tried
        again; failed: for good), the webhook's HTTP ``status`` if it answered, the ``error``
        if it did not."""
        self._outcome = outcome
        if status is not None:
            self._span.set_attribute(HTTP_STATUS, status)
        if outcome != "delivered":
            reason = error or str(status)
            self._span.set_attribute(ERROR_TYPE, reason)
            self._span.set_status(Status(StatusCode.ERROR, reason))
        self._span.set_attribute(PUSH_OUTCOME, outcome)


class _Untraced:
    """What :meth:`Telemetry.run` and :meth:`Telemetry.push` give while telemetry is off:
    every method does nothing (one object for all, so that being off costs no allocation)."""

    def __enter__(self) -> "_Untraced":
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def failed(self, error: BaseException, asked_for_input: bool) -> None:
        return None

    def sending(self, url: str, headers: dict[str, str]) -> None:
        return None

    def ended(self, outcome: str, status: int | None = None, error: str = "") -> None:
        return None


UNTRACED = _Untraced()


class _CountedStore:
    """A store the machine calls itself (the memory store), whose commits are counted: they
    never pass through the engine, which counts those of the stores it awaits."""

    def __init__(self, store: SyncStore, telemetry: Telemetry) -> None:
        self._store = store
        self._telemetry = telemetry
        # Reads are the store's own (no call of this wrapper's in between).
        self.read: Callable[[Reads], Snapshot] = store.read

    def commit(self, writes: Sequence[Write]) -> bool:
        ok = self._store.commit(writes)
        if ok:
            self._telemetry.committed(writes)
        else:
            self._telemetry.conflicted()
        return ok
