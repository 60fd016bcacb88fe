"""The v0.3 and legacy (v0.1) dialects, as transforms of the v1.0 wire form.

Where the old dialects differ from v1.0 (the ``kind``/``type`` discriminators, lower-case enum
spellings, the nesting of push configs, bare results instead of ``oneof`` wrappers, ``final`` on
status events, client-chosen task ids), the functions here translate between the two JSON
forms. Everything else, all validation included, is the v1.0 codec's: a v0.3 request is
reshaped into v1.0 JSON and then decoded like any other, and a reply is encoded as v1.0 JSON
and then reshaped. So there is still one model and one place where JSON meets it.

The old dialects share ``tasks/get``, ``tasks/cancel`` and ``tasks/resubscribe``, so what we
write for them is a superset both can read: v0.3 objects that also carry the v0.1 names
(``sessionId`` beside ``contextId``, ``type`` beside ``kind``, an artifact's ``index``, an
event's ``id``).

Transforms are lenient on input: a value of the wrong JSON type is passed on unchanged, for the
v1.0 decoder to refuse with a precise error.
"""

from collections.abc import Mapping
from typing import Any

__all__ = [
    "card_v03_fields",
    "event_out",
    "legacy_push_in",
    "legacy_send_in",
    "merge_missing",
    "push_get_in",
    "push_id_in",
    "push_list_out",
    "push_out",
    "push_set_in",
    "send_in",
    "task_out",
    "value_out",
]

_STATES = {
    "TASK_STATE_UNSPECIFIED": "unknown",
    "TASK_STATE_SUBMITTED": "submitted",
    "TASK_STATE_WORKING": "working",
    "TASK_STATE_COMPLETED": "completed",
    "TASK_STATE_FAILED": "failed",
    "TASK_STATE_CANCELED": "canceled",
    "TASK_STATE_INPUT_REQUIRED": "input-required",
    "TASK_STATE_REJECTED": "rejected",
    "TASK_STATE_AUTH_REQUIRED": "auth-required",
}
_ROLES = {"ROLE_USER": "user", "ROLE_AGENT": "agent", "ROLE_UNSPECIFIED": "unspecified"}
_ROLES_IN = {old: new for new, old in _ROLES.items()}

Json = dict[str, Any]


def _mapped(value: Any, table: Mapping[str, str]) -> Any:
    return table.get(value, value) if isinstance(value, str) else value


# --- v1.0 JSON -> v0.3 (and v0.1) JSON: what old clients read ----------------------------------


def part_out(part: Json) -> Json:
    """A v1.0 ``Part`` as a v0.3 Text/File/DataPart (also carrying v0.1's ``type``)."""
    if "text" in part:
        out: Json = {"kind": "text", "text": part["text"]}
    elif "data" in part:
        data = part["data"]
        # v0.3's DataPart holds an object; any other JSON value is wrapped.
        out = {"kind": "data", "data": data if isinstance(data, dict) else {"value": data}}
    else:
        file: Json = {}
        if "raw" in part:
            file["bytes"] = part["raw"]
        if "url" in part:
            file["uri"] = part["url"]
        if "filename" in part:
            file["name"] = part["filename"]
        if "mediaType" in part:
            file["mimeType"] = part["mediaType"]
        out = {"kind": "file", "file": file}
    out["type"] = out["kind"]
    if "metadata" in part:
        out["metadata"] = part["metadata"]
    return out


def message_out(message: Json) -> Json:
    out = dict(message)
    out["role"] = _mapped(message.get("role"), _ROLES)
    out["parts"] = [part_out(p) for p in message.get("parts", [])]
    out["kind"] = "message"
    return out


def _status_out(status: Json) -> Json:
    out = dict(status)
    out["state"] = _mapped(status.get("state"), _STATES)
    if "message" in status:
        out["message"] = message_out(status["message"])
    return out


def _artifact_out(artifact: Json, index: int) -> Json:
    out = dict(artifact)
    out["parts"] = [part_out(p) for p in artifact.get("parts", [])]
    out["index"] = index
    return out


def task_out(task: Json) -> Json:
    """A v1.0 ``Task`` as v0.3 (``kind: "task"``), with v0.1's ``sessionId``."""
    out = dict(task)
    out["kind"] = "task"
    out["contextId"] = task.get("contextId", "")
    out["sessionId"] = out["contextId"]
    out["status"] = _status_out(task["status"])
    if "history" in task:
        out["history"] = [message_out(m) for m in task["history"]]
    if "artifacts" in task:
        out["artifacts"] = [_artifact_out(a, i) for i, a in enumerate(task["artifacts"])]
    return out


def value_out(value: Json) -> Json:
    """A v1.0 ``SendMessageResponse`` or ``StreamResponse`` as the bare v0.3 object."""
    ((key, inner),) = value.items()
    if key == "task":
        return task_out(inner)
    if key == "message":
        return message_out(inner)
    return event_out(value, final=False)


def event_out(event: Json, *, final: bool, artifact_index: int = 0) -> Json:
    """A v1.0 ``StreamResponse`` as the v0.3 event (``kind``, and ``final`` on status updates),
    carrying v0.1's ``id`` (the task id) too, and on an artifact its place in the task (v0.1's
    ``index``, which the v1.0 event does not carry: the caller says)."""
    ((key, inner),) = event.items()
    if key == "task":
        return task_out(inner)
    if key == "message":
        return message_out(inner)
    out = dict(inner)
    out["id"] = inner["taskId"]
    if key == "statusUpdate":
        out["kind"] = "status-update"
        out["status"] = _status_out(inner["status"])
        out["final"] = final
    else:
        out["kind"] = "artifact-update"
        out["artifact"] = _artifact_out(inner["artifact"], artifact_index)
        out["append"] = inner.get("append", False)
        out["lastChunk"] = inner.get("lastChunk", False)
    return out


def _authentication_out(authentication: Json) -> Json:
    out: Json = {"schemes": [authentication["scheme"]]}
    if "credentials" in authentication:
        out["credentials"] = authentication["credentials"]
    return out


def push_out(config: Json) -> Json:
    """A v1.0 ``TaskPushNotificationConfig`` (flat) as v0.3's nested form, with v0.1's ``id``."""
    inner: Json = {k: config[k] for k in ("id", "url", "token") if k in config}
    if "authentication" in config:
        inner["authentication"] = _authentication_out(config["authentication"])
    return {
        "taskId": config.get("taskId", ""),
        "id": config.get("taskId", ""),
        "pushNotificationConfig": inner,
    }


def push_list_out(listing: Json) -> list[Json]:
    """v0.3 lists a task's push configs as a bare array."""
    return [push_out(c) for c in listing.get("configs", [])]


# --- v0.3 (and v0.1) JSON -> v1.0 JSON: what old clients send ----------------------------------


def part_in(part: Any) -> Any:
    """A v0.3 (``kind``) or v0.1 (``type``) part as a v1.0 ``Part``."""
    if not isinstance(part, dict):
        return part
    kind = part.get("kind", part.get("type"))
    out: Json = {}
    if kind == "text":
        out["text"] = part.get("text")
    elif kind == "data":
        out["data"] = part.get("data")
    elif kind == "file":
        file = part.get("file")
        if not isinstance(file, dict):
            return {"file": file}  # refused by the decoder, naming the field
        if "bytes" in file:
            out["raw"] = file["bytes"]
        if "uri" in file:
            out["url"] = file["uri"]
        if "name" in file:
            out["filename"] = file["name"]
        if "mimeType" in file:
            out["mediaType"] = file["mimeType"]
    elif kind is not None:
        return {}  # an unknown kind: the decoder refuses a part with no content, by its path
    else:
        return part  # no discriminator: taken as a v1.0 part
    if "metadata" in part:
        out["metadata"] = part["metadata"]
    return out


def message_in(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    out = {k: v for k, v in message.items() if k != "kind"}
    out["role"] = _mapped(message.get("role"), _ROLES_IN)
    if isinstance(message.get("parts"), list):
        out["parts"] = [part_in(p) for p in message["parts"]]
    return out


def _authentication_in(authentication: Any) -> Any:
    if not isinstance(authentication, dict):
        return authentication
    schemes = authentication.get("schemes")
    scheme = schemes[0] if isinstance(schemes, list) and schemes else authentication.get("scheme")
    out: Json = {"scheme": scheme}
    if "credentials" in authentication:
        out["credentials"] = authentication["credentials"]
    return out


def _push_config_in(config: Any, task_id: Any = None) -> Any:
    """v0.3's ``PushNotificationConfig`` as the flat v1.0 ``TaskPushNotificationConfig``."""
    if not isinstance(config, dict):
        return config
    out = {k: config[k] for k in ("id", "url", "token") if k in config}
    if "authentication" in config:
        out["authentication"] = _authentication_in(config["authentication"])
    if task_id is not None:
        out["taskId"] = task_id
    return out


def send_in(params: Any) -> Any:
    """``MessageSendParams`` as a v1.0 ``SendMessageRequest``. A send blocks unless
    ``blocking`` is false: the v0.3 spec leaves the default open, and its official SDK
    (``a2a-sdk`` 0.3) blocks when the flag is missing, as every v1.0 send does."""
    if not isinstance(params, dict):
        return params
    out: Json = {k: v for k, v in params.items() if k != "configuration"}
    out["message"] = message_in(params.get("message"))
    config = params.get("configuration")
    if config is not None and not isinstance(config, dict):
        out["configuration"] = config  # refused by the decoder, naming the field
        return out
    config = config or {}
    new: Json = {k: config[k] for k in ("acceptedOutputModes", "historyLength") if k in config}
    blocking = config.get("blocking")
    # A flag of the wrong type is handed on as it is, for the decoder to refuse.
    flag = blocking is None or isinstance(blocking, bool)
    new["returnImmediately"] = blocking is False if flag else blocking
    if "pushNotificationConfig" in config:
        new["taskPushNotificationConfig"] = _push_config_in(config["pushNotificationConfig"])
    out["configuration"] = new
    return out


#: The id a v0.3 or legacy config gets when the client names none. Those clients think of "the
#: task's push config": setting another un-named one replaces it, and the 0.3 conformance kit
#: reads it back under this id.
DEFAULT_PUSH_CONFIG_ID = "default"


def push_set_in(params: Any) -> Any:
    """v0.3's ``TaskPushNotificationConfig`` (nested) as v1.0's (flat)."""
    if not isinstance(params, dict):
        return params
    return _named(_push_config_in(params.get("pushNotificationConfig"), params.get("taskId")))


def _named(config: Any) -> Any:
    if isinstance(config, dict) and not config.get("id"):
        return {**config, "id": DEFAULT_PUSH_CONFIG_ID}
    return config


def push_get_in(params: Any) -> Any:
    """``{id, pushNotificationConfigId?}`` (the config id may be left out: the task's first)."""
    if not isinstance(params, dict):
        return params
    return {"taskId": params.get("id"), "id": params.get("pushNotificationConfigId", "")}


def push_id_in(params: Any) -> Any:
    """``{id}`` naming a task, as v1.0's ``{taskId}``."""
    if not isinstance(params, dict):
        return params
    return {"taskId": params.get("id")}


def legacy_send_in(params: Any) -> Any:
    """v0.1's ``TaskSendParams``: the client chose the task id; ``sessionId`` is the context;
    the seed's ``skillId`` routes; an owner in metadata is ignored (the caller is the owner)."""
    if not isinstance(params, dict):
        return params
    message = message_in(params.get("message"))
    if isinstance(message, dict):
        message = dict(message)
        message.setdefault("messageId", "")
        if params.get("id") is not None:
            message["taskId"] = params["id"]
        if params.get("sessionId") is not None:
            message["contextId"] = params["sessionId"]
    out: Json = {"message": message}
    config: Json = {"returnImmediately": True}
    if "historyLength" in params:
        config["historyLength"] = params["historyLength"]
    if "pushNotification" in params:
        config["taskPushNotificationConfig"] = _push_config_in(params["pushNotification"])
    out["configuration"] = config
    metadata = params.get("metadata")
    if isinstance(metadata, dict) or "skillId" in params:
        merged = dict(metadata) if isinstance(metadata, dict) else {}
        merged.pop("owner", None)
        if "skillId" in params:
            merged["skillId"] = params["skillId"]
        out["metadata"] = merged
    elif metadata is not None:
        out["metadata"] = metadata
    return out


def legacy_push_in(params: Any) -> Any:
    """v0.1's ``tasks/pushNotification/set``: ``{id, pushNotificationConfig}``."""
    if not isinstance(params, dict):
        return params
    return _named(_push_config_in(params.get("pushNotificationConfig"), params.get("id")))


def card_v03_fields(card: Json, jsonrpc_url: str) -> Json:
    """The v0.3 fields of a card (``url``, ``protocolVersion``, ``preferredTransport``, …)
    to add to the v1.0 card wherever it does not already have the key."""
    extra: Json = {
        "protocolVersion": "0.3.0",
        "url": jsonrpc_url,
        "preferredTransport": "JSONRPC",
        # Only JSON-RPC: the HTTP+JSON routes speak v1.0, which a 0.3 REST client cannot read.
        "additionalInterfaces": [{"url": jsonrpc_url, "transport": "JSONRPC"}],
        "capabilities": {"stateTransitionHistory": False},
    }
    if card.get("capabilities", {}).get("extendedAgentCard"):
        extra["supportsAuthenticatedExtendedCard"] = True
    schemes = card.get("securitySchemes", {})
    if schemes:
        extra["securitySchemes"] = {name: _scheme_v03(s) for name, s in schemes.items()}
    requirements = card.get("securityRequirements", [])
    if requirements:
        extra["security"] = [
            {name: scopes.get("list", []) for name, scopes in r.get("schemes", {}).items()}
            for r in requirements
        ]
    return extra


def _scheme_v03(scheme: Json) -> Json:
    """A v1.0 ``SecurityScheme`` (oneof wrapper) in v0.3's OpenAPI style (``type``)."""
    ((key, inner),) = scheme.items()
    description = {"description": inner["description"]} if "description" in inner else {}
    match key:
        case "apiKeySecurityScheme":
            return {
                "type": "apiKey",
                "in": inner.get("location"),
                "name": inner.get("name"),
            } | description
        case "httpAuthSecurityScheme":
            out = {"type": "http", "scheme": inner.get("scheme")} | description
            if "bearerFormat" in inner:
                out["bearerFormat"] = inner["bearerFormat"]
            return out
        case "oauth2SecurityScheme":
            return {"type": "oauth2", "flows": inner.get("flows", {})} | description
        case "openIdConnectSecurityScheme":
            return {
                "type": "openIdConnect",
                "openIdConnectUrl": inner.get("openIdConnectUrl"),
            } | description
    return {"type": "mutualTLS"} | description


def merge_missing(base: Json, extra: Json) -> Json:
    """``base`` with every key of ``extra`` it lacks, recursively (``base`` wins)."""
    for key, value in extra.items():
        if key not in base:
            base[key] = value
        elif isinstance(value, dict) and isinstance(base[key], dict):
            merge_missing(base[key], value)
    return base
