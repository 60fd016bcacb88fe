"""The v1.0 wire dialect: ProtoJSON of ``lf.a2a.v1`` (ADR-001).

camelCase names, enum values by proto name (numbers accepted), ``oneof`` members as wrapper keys
(``{"task": …}``, ``{"apiKeySecurityScheme": …}``), unknown fields ignored, REQUIRED fields
enforced, default values omitted on output.
"""

from collections.abc import Mapping
from typing import Any, TypeVar

import cattrs

from a2a_core._errors import ERROR_DOMAIN, A2AError, FieldViolation, InvalidParamsError
from a2a_core.model._card import (
    APIKeySecurityScheme,
    AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow,
    DeviceCodeOAuthFlow,
    HTTPAuthSecurityScheme,
    ImplicitOAuthFlow,
    MutualTlsSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlow,
    OpenIdConnectSecurityScheme,
    PasswordOAuthFlow,
    SecurityRequirement,
    SecurityScheme,
)
from a2a_core.model._requests import SendMessageRequest
from a2a_core.model._task import (
    Message,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)

from ._quick import send_request
from ._strict import (
    format_timestamp,
    format_timestamp_precise,
    make_converter,
    register_exact,
    violations,
)

__all__ = ["V1Codec"]

T = TypeVar("T")

_TASK_STATE_NUMBERS = dict(enumerate(TaskState))
_ROLE_NUMBERS = dict(enumerate(Role))

_SCHEME_KEYS: Mapping[str, type[Any]] = {
    "apiKeySecurityScheme": APIKeySecurityScheme,
    "httpAuthSecurityScheme": HTTPAuthSecurityScheme,
    "oauth2SecurityScheme": OAuth2SecurityScheme,
    "openIdConnectSecurityScheme": OpenIdConnectSecurityScheme,
    "mtlsSecurityScheme": MutualTlsSecurityScheme,
}
_FLOW_KEYS: Mapping[str, type[Any]] = {
    "authorizationCode": AuthorizationCodeOAuthFlow,
    "clientCredentials": ClientCredentialsOAuthFlow,
    "deviceCode": DeviceCodeOAuthFlow,
    "implicit": ImplicitOAuthFlow,
    "password": PasswordOAuthFlow,
}
#: The type cattrs knows as "a JSON object" (a name, since mypy rejects abstract ``type[...]``).
_JSONObject: Any = Mapping[str, Any]

_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
_BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"

_EVENT_KEYS: Mapping[type[Any], str] = {
    Task: "task",
    Message: "message",
    TaskStatusUpdateEvent: "statusUpdate",
    TaskArtifactUpdateEvent: "artifactUpdate",
}

_EVENTS_BY_KEY: Mapping[str, type[Any]] = {key: cls for cls, key in _EVENT_KEYS.items()}


def _oneof(conv: cattrs.Converter, keys: Mapping[str, type[Any]], what: str) -> Any:
    names = {cls: key for key, cls in keys.items()}

    def structure(value: Any, _: Any) -> Any:
        if type(value) is not dict:
            raise TypeError(f"expected a JSON object holding one {what}")
        present = [key for key in value if key in keys]
        if len(present) != 1:
            raise ValueError(f"expected exactly one of {', '.join(keys)}")
        return conv.structure(value[present[0]], keys[present[0]])

    def unstructure(value: Any) -> Any:
        return {names[type(value)]: conv.unstructure(value, type(value))}

    return structure, unstructure


def _build(precise: bool) -> cattrs.Converter:
    conv = make_converter(
        {TaskState: _TASK_STATE_NUMBERS, Role: _ROLE_NUMBERS},
        timestamp=format_timestamp_precise if precise else format_timestamp,
    )

    scheme_in, scheme_out = _oneof(conv, _SCHEME_KEYS, "security scheme")
    conv.register_structure_hook(SecurityScheme, scheme_in)
    conv.register_unstructure_hook(SecurityScheme, scheme_out)
    register_exact(
        conv,
        Mapping[str, SecurityScheme],
        lambda value, _: {
            name: scheme_in(scheme, None)
            for name, scheme in conv.structure(value, _JSONObject).items()
        },
        lambda value: {name: scheme_out(scheme) for name, scheme in value.items()},
    )

    flow_in, flow_out = _oneof(conv, _FLOW_KEYS, "OAuth flow")
    conv.register_structure_hook(OAuthFlow, flow_in)
    conv.register_unstructure_hook(OAuthFlow, flow_out)

    def requirement_in(value: Any, _: Any) -> SecurityRequirement:
        schemes = conv.structure(value, _JSONObject).get("schemes", {})
        lists = conv.structure(schemes, _JSONObject)
        return SecurityRequirement(
            {
                name: conv.structure(
                    conv.structure(scopes, _JSONObject).get("list", []), tuple[str, ...]
                )
                for name, scopes in lists.items()
            }
        )

    conv.register_structure_hook(SecurityRequirement, requirement_in)
    conv.register_unstructure_hook(
        SecurityRequirement,
        lambda r: {"schemes": {name: {"list": list(scopes)} for name, scopes in r.schemes.items()}},
    )
    return conv


class V1Codec:
    """Decode v1.0 requests into the model and encode model values as v1.0 JSON.

    ``precise`` writes timestamps with every microsecond rather than the milliseconds clients
    are shown: still ProtoJSON, and what a store needs to give back exactly what it was given.
    """

    def __init__(self, *, precise: bool = False) -> None:
        self.converter = _build(precise)
        #: The writer of each event class, found once (``unstructure`` looks it up per call).
        self._event_writers: Mapping[type[Any], Any] = {
            cls: self.converter.get_unstructure_hook(cls) for cls in _EVENT_KEYS
        }

    def decode(self, cls: type[T], value: Any, path: str) -> T:
        """Structure ``value`` as ``cls``; failures become -32602 naming the field's wire path."""
        if cls is SendMessageRequest:
            # The call answered most: a plainly well-formed one skips cattrs' generic hooks
            # (the same value; anything unusual comes back None and is decoded strictly).
            quick: T | None = send_request(value)  # type: ignore[assignment]
            if quick is not None:
                return quick
            _no_empty_task_id(value, path)
        try:
            return self.converter.structure(value, cls)
        except Exception as exc:
            found = violations(exc, path)
            summary = "; ".join(f"{v.field}: {v.description}" for v in found[:3])
            raise InvalidParamsError(
                f"Invalid parameters: {summary}", violations=tuple(found)
            ) from None

    def encode(self, value: Any) -> Any:
        """The JSON value (dicts, lists, strings…) of a model object."""
        return self.converter.unstructure(value)

    def encode_event(self, event: StreamEvent) -> dict[str, Any]:
        """A ``StreamResponse`` (or ``SendMessageResponse``): the value under its oneof key."""
        cls = type(event)
        return {_EVENT_KEYS[cls]: self._event_writers[cls](event)}

    def decode_event(self, value: Any, path: str) -> StreamEvent:
        """The event a ``StreamResponse`` holds (what :meth:`encode_event` wrote)."""
        if type(value) is not dict or len(value) != 1 or next(iter(value)) not in _EVENTS_BY_KEY:
            raise InvalidParamsError(f"Invalid parameters: {path}: not one stream event")
        ((key, event),) = value.items()
        decoded: StreamEvent = self.decode(_EVENTS_BY_KEY[key], event, f"{path}.{key}")
        return decoded

    def encode_error_details(self, error: A2AError) -> list[dict[str, Any]]:
        """``google.rpc`` detail objects: always an ErrorInfo, and a BadRequest for bad fields."""
        info: dict[str, Any] = {
            "@type": _ERROR_INFO,
            "reason": error.codes.reason,
            "domain": ERROR_DOMAIN,
        }
        if error.metadata:
            info["metadata"] = dict(error.metadata)
        details = [info]
        if error.violations:
            details.append(
                {
                    "@type": _BAD_REQUEST,
                    "fieldViolations": [
                        {"field": v.field, "description": v.description} for v in error.violations
                    ],
                }
            )
        return details


def _no_empty_task_id(value: Any, path: str) -> None:
    """A send's ``message.taskId`` given as ``""``: the model reads no id as a new task, so an
    empty one is refused here, where it can still be told from a missing one (a client that
    meant a follow-up, with its id lost on the way, would otherwise start a task it did not
    mean to)."""
    message = value.get("message") if isinstance(value, dict) else None
    if isinstance(message, dict) and message.get("taskId") == "":
        field = f"{path}.message.taskId" if path else "message.taskId"
        problem = "must not be empty (leave it out to start a new task)"
        raise InvalidParamsError(
            f"Invalid parameters: {field}: {problem}", violations=(FieldViolation(field, problem),)
        )
