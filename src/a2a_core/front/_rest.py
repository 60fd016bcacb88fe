"""The HTTP+JSON (REST) binding of v1.0: routes, parameters, and ``google.rpc.Status`` errors.

The routes are the proto's ``google.api.http`` annotations, as a table (data): a method, a path
pattern, and the operation it means. Every route also exists below a ``/{tenant}`` prefix, which
becomes the request's ``tenant``. Path parameters, query parameters (strings, converted where
the field is a boolean) and the JSON body are merged into one object and decoded by the same
v1.0 codec as JSON-RPC ``params``, so both bindings accept and refuse exactly the same requests.
"""

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote

import attrs

from a2a_core._config import ErrorMapping
from a2a_core._errors import A2AError
from a2a_core.decide._inputs import Operation

__all__ = [
    "REST_ROUTES",
    "RestMatch",
    "RestRoute",
    "match_rest",
    "rest_error_body",
    "rest_params",
    "status_of",
]


@attrs.frozen
class RestRoute:
    """One route: ``methods`` on ``pattern`` mean ``operation``; ``body`` says it takes one."""

    methods: frozenset[str]
    pattern: str
    operation: Operation
    body: bool = False


def _route(methods: str, pattern: str, operation: Operation, *, body: bool = False) -> RestRoute:
    return RestRoute(frozenset(methods.split("|")), pattern, operation, body)


_O = Operation
#: The v1.0 REST routes (proto ``google.api.http``). ``{name}`` is one path segment.
REST_ROUTES: tuple[RestRoute, ...] = (
    _route("POST", "/message:send", _O.SEND_MESSAGE, body=True),
    _route("POST", "/message:stream", _O.SEND_STREAMING_MESSAGE, body=True),
    _route("GET", "/tasks", _O.LIST_TASKS),
    _route("GET", "/tasks/{id}", _O.GET_TASK),
    _route("POST", "/tasks/{id}:cancel", _O.CANCEL_TASK, body=True),
    # The spec text says POST, the proto says GET: both are accepted.
    _route("GET|POST", "/tasks/{id}:subscribe", _O.SUBSCRIBE_TO_TASK),
    _route("POST", "/tasks/{taskId}/pushNotificationConfigs", _O.CREATE_PUSH_CONFIG, body=True),
    _route("GET", "/tasks/{taskId}/pushNotificationConfigs", _O.LIST_PUSH_CONFIGS),
    _route("GET", "/tasks/{taskId}/pushNotificationConfigs/{id}", _O.GET_PUSH_CONFIG),
    _route("DELETE", "/tasks/{taskId}/pushNotificationConfigs/{id}", _O.DELETE_PUSH_CONFIG),
    _route("GET", "/extendedAgentCard", _O.GET_EXTENDED_CARD),
)

#: Query parameters that are booleans (every other one is a string or a number, which the
#: codec reads from a string as ProtoJSON allows).
_BOOLEAN_QUERY = frozenset({"includeArtifacts"})


def _compile(pattern: str) -> re.Pattern[str]:
    # The patterns hold only letters, "/" and ":" besides their {placeholders}.
    regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", pattern)
    return re.compile(rf"(?:/(?P<tenant>[^/]+))?{regex}")


#: Routes with a custom verb (``:subscribe``) first: otherwise ``GET /tasks/t:subscribe`` would
#: read as ``GET /tasks/{id}`` of a task named ``t:subscribe``.
_COMPILED = tuple(
    (_compile(route.pattern), route)
    for route in sorted(REST_ROUTES, key=lambda route: ":" not in route.pattern)
)


@attrs.frozen
class RestMatch:
    """A request that matched a route: the operation and its path parameters (``tenant`` too)."""

    route: RestRoute
    path_params: Mapping[str, str]


def match_rest(method: str, path: str) -> RestMatch | frozenset[str] | None:
    """The route ``path`` names: a match, the allowed methods if only the method is wrong, or
    ``None`` if no route has this path.

    Routes without a tenant are tried first, so ``/tasks/abc`` is a task, not tenant ``tasks``.
    """
    allowed: set[str] = set()
    for with_tenant in (False, True):
        matched = ""  # the first pattern the path fits: only its routes may answer
        for regex, route in _COMPILED:
            if matched and route.pattern != matched:
                continue
            found = regex.fullmatch(path)
            if found is None or (found.group("tenant") is not None) != with_tenant:
                continue
            matched = route.pattern
            if method not in route.methods:
                allowed |= route.methods
                continue
            params = {k: unquote(v) for k, v in found.groupdict().items() if v is not None}
            return RestMatch(route, params)
        if allowed:
            break
    return frozenset(allowed) if allowed else None


def rest_params(match: RestMatch, query: str, body: Any) -> dict[str, Any]:
    """The request object: the JSON body, then the query string, then the path parameters."""
    params: dict[str, Any] = dict(body) if isinstance(body, dict) else {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name == "A2A-Version":
            continue
        if name in _BOOLEAN_QUERY:
            params[name] = {"true": True, "false": False}.get(value, value)
        else:
            params[name] = value
    params.update(match.path_params)
    return params


def status_of(error: A2AError, mapping: ErrorMapping) -> int:
    """The HTTP status of ``error`` under the chosen version of the spec's mapping table."""
    codes = error.codes
    return codes.http_v1_0_0 if mapping is ErrorMapping.V1_0_0 else codes.http


def rest_error_body(error: A2AError, status: int, details: list[dict[str, Any]]) -> dict[str, Any]:
    """A ``google.rpc.Status`` as the REST binding sends it (AIP-193)."""
    return {
        "error": {
            "code": status,
            "status": error.codes.grpc,
            "message": error.message,
            "details": details,
        }
    }
