"""The quick way to decode a well-formed send: plain dicts straight into the model classes.

``SendMessage`` is the call a server answers most, and cattrs' strict structuring of it (a
request, its message, each part, the optional members and tuples) costs some thirty Python calls
in its generic hooks, most of them to find out that each field is what it almost always is.
Here each field is checked by its JSON type inline and the classes are built directly.

The quick way only ever *accepts*: the moment anything is unusual (a key it does not know,
snake_case names, an integer written as a string, bytes, a push config, a value of the wrong
type, a part without exactly one content member) it gives up and returns ``None``, and the
caller decodes the same value the strict way, which raises the same errors with the same paths
as ever. So whatever it returns must equal what the strict decoder returns for that value:
``tests/a2a_core/wire/test_quick.py`` checks this over valid, near-valid and hostile requests.
"""

# Optional keys are read as ``d[k] if k in d else default``, not ``d.get(k, default)``, which
# is a call (and this module exists to save calls): hence no SIM401 here.
# ruff: noqa: SIM401

from typing import Any

from a2a_core.model._requests import SendMessageConfiguration, SendMessageRequest
from a2a_core.model._task import Message, Part, Role

__all__ = ["send_request"]

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1

_ROLES = {role.value: role for role in Role}
#: The camelCase keys each class decodes here (``raw`` is base64 and push configs are rare:
#: both go the strict way).
_SEND_KEYS = frozenset({"message", "tenant", "configuration", "metadata"})
_CONFIG_KEYS = frozenset({"acceptedOutputModes", "historyLength", "returnImmediately"})
_MESSAGE_KEYS = frozenset(
    {
        "messageId",
        "role",
        "parts",
        "contextId",
        "taskId",
        "metadata",
        "extensions",
        "referenceTaskIds",
    }
)
_PART_KEYS = frozenset({"text", "url", "data", "metadata", "filename", "mediaType"})


class _Unusual(Exception):
    """Something the quick way does not decode: the strict way will."""


def send_request(value: Any) -> SendMessageRequest | None:
    """``value`` (a request's params) as a :class:`SendMessageRequest`, or ``None`` when it is
    not plainly well-formed (then the strict decoder says what is wrong, or decodes it)."""
    # Keys are tested with ``in`` and read by subscript, types with ``type(...) is``: none of
    # it is a call, where ``dict.get`` and ``isinstance`` would be one each.
    if type(value) is not dict or not _SEND_KEYS.issuperset(value):
        return None
    try:
        message = _message(value["message"]) if "message" in value else None
        configuration = value["configuration"] if "configuration" in value else None
        if configuration is not None:
            configuration = _configuration(configuration)
    except _Unusual:
        return None
    tenant = value["tenant"] if "tenant" in value else ""
    metadata = value["metadata"] if "metadata" in value else None
    if (
        message is None
        or type(tenant) is not str
        or (metadata is not None and type(metadata) is not dict)
    ):
        return None
    return SendMessageRequest(message, tenant, configuration, metadata)


def _configuration(value: Any) -> SendMessageConfiguration:
    if type(value) is not dict or not _CONFIG_KEYS.issuperset(value):
        raise _Unusual
    modes = _strings(value["acceptedOutputModes"]) if "acceptedOutputModes" in value else ()
    history = value["historyLength"] if "historyLength" in value else None
    returns = value["returnImmediately"] if "returnImmediately" in value else False
    if type(returns) is not bool or (
        history is not None
        and (type(history) is not int or not _INT32_MIN <= history <= _INT32_MAX)
    ):
        raise _Unusual
    return SendMessageConfiguration(modes, None, history, returns)


def _message(value: Any) -> Message:
    if type(value) is not dict or not _MESSAGE_KEYS.issuperset(value):
        raise _Unusual
    if "messageId" not in value or "role" not in value or "parts" not in value:
        raise _Unusual
    message_id, role, parts = value["messageId"], value["role"], value["parts"]
    context_id = value["contextId"] if "contextId" in value else ""
    task_id = value["taskId"] if "taskId" in value else ""
    metadata = value["metadata"] if "metadata" in value else None
    if (
        type(message_id) is not str
        or type(role) is not str
        or role not in _ROLES
        or type(parts) is not list
        or type(context_id) is not str
        or type(task_id) is not str
        or (not task_id and "taskId" in value)  # an empty id is refused the strict way
        or (metadata is not None and type(metadata) is not dict)
    ):
        raise _Unusual
    extensions = _strings(value["extensions"]) if "extensions" in value else ()
    references = _strings(value["referenceTaskIds"]) if "referenceTaskIds" in value else ()
    return Message(
        message_id,
        _ROLES[role],
        tuple([_part(part) for part in parts]),
        context_id,
        task_id,
        metadata,
        extensions,
        references,
    )


def _part(value: Any) -> Part:
    if type(value) is not dict or not _PART_KEYS.issuperset(value):
        raise _Unusual
    text = value["text"] if "text" in value else None
    url = value["url"] if "url" in value else None
    data = value["data"] if "data" in value else None
    metadata = value["metadata"] if "metadata" in value else None
    filename = value["filename"] if "filename" in value else ""
    media_type = value["mediaType"] if "mediaType" in value else ""
    if (
        (text is not None) + (url is not None) + (data is not None) != 1
        or (text is not None and type(text) is not str)
        or (url is not None and type(url) is not str)
        or (metadata is not None and type(metadata) is not dict)
        or type(filename) is not str
        or type(media_type) is not str
    ):
        raise _Unusual
    return Part(text, None, url, data, metadata, filename, media_type)


def _strings(value: Any) -> tuple[str, ...]:
    """A JSON array of strings, as a tuple."""
    if type(value) is not list:
        raise _Unusual
    for item in value:
        if type(item) is not str:
            raise _Unusual
    return tuple(value)
