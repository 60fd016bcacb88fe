"""A settled task in one compact blob: how the memory store keeps tasks that can no longer change.

A task that has settled (terminal, no run under way) is read, listed and expired for as long as
the store keeps it, but written again only rarely. As live objects, its record and its event log
are a graph of some thirty Python objects (the task, its status, history, artifacts, parts, the
events that repeat them, datetimes, the owner): about 1,700 bytes for an echo task. Encoded, the
same values take about 90 bytes, which is most of what ``MemoryTasks`` holds per task.

Every settled task is encoded once (the store compacts it soon after it settles) and decoded at
every read of it, both on the path of a send: the encoding is made for speed first, then size.

* Each class of the model has its own encoder and decoder, written out field by field: a value
  becomes a tuple of its fields in a fixed order (no class code, no dispatch on each value's
  type), rebuilt by calling its class with them. The fields each coder expects are checked
  against the classes at import (:func:`_check_fields`), so that a field added to the model
  cannot be dropped silently: the import fails until the coders know it.
* What the record repeats is written once. A task's events repeat its own values (its status,
  its artifacts, the messages now in its history: the very same objects), which they name by
  number; an id equal to the task's (every event's, every message's) is ``True``; a part that
  is only a text (most are) is its text.
* What deflate cannot shrink is written as small as it is: an id the server drew (a UUID) as
  its 16 bytes rather than 36 characters, a message's fingerprint as its 18 bytes rather than
  24 in base64, a time as the 10 bytes of its fields.
* The tree of tuples is pickled, with two restrictions: only Python's own types, written as
  they are (anything else, a ``str`` subclass, a datetime in a part's data, makes the task
  keep its objects), and no references to values written before, so that a tree is the same
  bytes whichever of its texts happen to be one object. (:mod:`marshal` writes a value held
  elsewhere as such a reference: the bytes of a task then depend on what else holds its
  values, and an echo task that deflate's dictionary matched took 25 bytes more when its two texts
  were two objects.) Both run in memory, on bytes this process made: a blob never leaves the
  process (no store persists one: the SQLite and Redis stores keep JSON of their own).
* The result is deflated with a preset dictionary (example tasks encoded), so that what most
  tasks spell alike costs a few bits: the fastest level, with a small window and a compressor
  primed with the dictionary once and copied for each task rather than set up anew.

:func:`decode` rebuilds values equal to those encoded (``decode(encode(r, log)) == (r, log)``),
of the same types. A value the encoding does not know (an object an agent put in a part's data,
a list where the model has a tuple) makes :func:`encode` return ``None``, and the store keeps
that task as it is: the compact form is an economy, never a change of what a read returns.
"""

import io
import pickle
import zlib
from binascii import a2b_base64, b2a_base64
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import attrs

from a2a_core.model._records import Owner, TaskRecord
from a2a_core.model._task import (
    Artifact,
    AuthenticationInfo,
    Message,
    Part,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

__all__ = ["decode", "decode_record", "encode", "state_of", "version_of"]


def _check_fields(cls: type, names: str) -> None:
    """The coders below write and read ``cls``'s fields by name: fail at import, not by losing
    a value, if the model's fields are no longer those."""
    fields = getattr(cls, "_fields", None)  # a named tuple's (the owner)
    if fields is None:
        fields = tuple(f.name for f in attrs.fields(cls))
    if fields != tuple(names.split()):
        raise RuntimeError(f"a2a_core.store._compact does not know the fields of {cls.__name__}")


_check_fields(Part, "text raw url data metadata filename media_type")
_check_fields(
    Message, "message_id role parts context_id task_id metadata extensions reference_task_ids"
)
_check_fields(Artifact, "artifact_id parts name description metadata extensions")
_check_fields(TaskStatus, "state message timestamp")
_check_fields(Task, "id status context_id artifacts history metadata")
_check_fields(TaskStatusUpdateEvent, "task_id context_id status metadata")
_check_fields(
    TaskArtifactUpdateEvent, "task_id context_id artifact append last_chunk metadata index"
)
_check_fields(AuthenticationInfo, "scheme credentials")
_check_fields(TaskPushNotificationConfig, "url tenant id task_id token authentication")
_check_fields(Owner, "principal tenant")
_check_fields(
    TaskRecord,
    "task owner version created_at run running skill_id seq replied messages push_configs key",
)

#: The format, in the high four bits of a blob's first byte (its low four are the state; the
#: format before this one left them 0). A blob never outlives the process that made it (no
#: store writes one anywhere), so there is no older format to read: a blob of another one can
#: only be a mistake, which decoding reports rather than misreads.
_FORMAT = 1
_STATES = tuple(TaskState)
_STATE_INDEX = {state: index for index, state in enumerate(_STATES)}
_ROLES = tuple(Role)
_ROLE_INDEX = {role: index for index, role in enumerate(_ROLES)}
_EMPTY = ""
#: Event kinds (an event's node is ``(kind, ...)``; ``None`` is the caller's marker).
_STATUS_EVENT, _ARTIFACT_EVENT, _TASK_EVENT, _MESSAGE_EVENT = range(4)


class _Unencodable(Exception):
    """A value the encoding does not know."""


# --- encoding -----------------------------------------------------------------------------------


def _id(text: Any) -> str | bytes:
    """An id as the server draws them (a UUID, as ``str(uuid4())`` spells it) as its 16 bytes,
    any other as it is. Random, it is what deflate cannot shrink: 36 bytes of text where the
    UUID's own bytes take 16 (a task's id and its context's are a third of an echo's blob)."""
    if type(text) is not str:
        raise _Unencodable(text)
    if len(text) == 36 and text[8] == "-":
        digits = text.replace("-", "")
        try:
            raw = bytes.fromhex(digits)
        except ValueError:
            return text
        # 32 digits, in lower case (as hex() writes them back), and 4 dashes where UUIDs have
        # them: anything else (capitals, spaces fromhex skipped) is kept as it is.
        if len(raw) == 16 and raw.hex() == digits and text[13] == text[18] == text[23] == "-":
            return raw
    return text


def _uuid_text(raw: bytes) -> str:
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _messages(messages: Any) -> tuple[tuple[str | bytes, str | bytes], ...]:
    """The ids and fingerprints of the messages a task accepted (a fingerprint, 18 bytes in
    base64, as those bytes: random too)."""
    if type(messages) is not tuple:
        raise _Unencodable(messages)
    nodes = []
    for pair in messages:
        if type(pair) is not tuple or len(pair) != 2:
            raise _Unencodable(pair)
        message_id, fingerprint = pair
        if type(fingerprint) is not str:
            raise _Unencodable(fingerprint)
        if len(fingerprint) == 24:
            try:
                raw = a2b_base64(fingerprint, strict_mode=True)
            except ValueError:  # (binascii.Error, or a character beyond ASCII)
                pass
            else:
                # 18 bytes from 24 characters: no padding, no bits left over, so strict base64
                # spells them back exactly so (what else decodes is kept as text).
                if len(raw) == 18:
                    fingerprint = raw
        nodes.append((_id(message_id), fingerprint))
    return tuple(nodes)


def _other(value: Any, own: str) -> Any:
    """``True`` for the task's own id ``own``, else ``value`` (a text). (Callers try ``is``
    first: the core hands the task's own string on.)"""
    if type(value) is not str:
        raise _Unencodable(value)
    return True if value == own else value


def _time(value: Any) -> Any:
    """A UTC time as the 10 bytes pickle writes a datetime with, any other as ISO 8601 text."""
    if value is None:
        return None
    if type(value) is not datetime:
        raise _Unencodable(value)
    state = value.__reduce__()[1]
    if state[-1] is UTC:
        return state[0]
    return value.isoformat()


def _parts(parts: Any) -> tuple[Any, ...]:
    """A text-only part (most are) as its text, any other as its fields."""
    if type(parts) is not tuple:  # (rebuilt as a tuple: a list would not come back equal)
        raise _Unencodable(parts)
    nodes: list[Any] = []
    for part in parts:
        if type(part) is not Part:
            raise _Unencodable(part)
        text = part.text
        if (
            type(text) is str
            and part.raw is None
            and part.url is None
            and part.data is None
            and part.metadata is None
            and part.filename is _EMPTY
            and part.media_type is _EMPTY
        ):
            nodes.append(text)
        else:
            nodes.append(
                (
                    text,
                    part.raw,
                    part.url,
                    part.data,
                    part.metadata,
                    part.filename,
                    part.media_type,
                )
            )
    return tuple(nodes)


def _message(message: Any, task_id: str, context_id: str) -> tuple[Any, ...]:
    if type(message) is not Message or type(message.role) is not Role:
        raise _Unencodable(message)
    of_context, of_task = message.context_id, message.task_id
    return (
        _id(message.message_id),
        _ROLE_INDEX[message.role],
        _parts(message.parts),
        True if of_context is context_id else _other(of_context, context_id),
        True if of_task is task_id else _other(of_task, task_id),
        message.metadata,
        message.extensions,
        message.reference_task_ids,
    )


def _artifact(artifact: Any) -> tuple[Any, ...]:
    if type(artifact) is not Artifact:
        raise _Unencodable(artifact)
    return (
        _id(artifact.artifact_id),
        _parts(artifact.parts),
        artifact.name,
        artifact.description,
        artifact.metadata,
        artifact.extensions,
    )


def _status(status: Any, task_id: str, context_id: str, refs: dict[int, int]) -> tuple[Any, ...]:
    if type(status) is not TaskStatus or type(status.state) is not TaskState:
        raise _Unencodable(status)
    message: Any = status.message
    if message is not None:
        ref = refs.get(id(message))
        message = _message(message, task_id, context_id) if ref is None else ref
    return (_STATE_INDEX[status.state], message, _time(status.timestamp))


def _task(task: Any, refs: dict[int, int]) -> tuple[Any, ...]:
    """``task``'s node. The values its events may repeat are numbered in ``refs`` (by their
    ``id``, each kept alive by the task): its history's messages, its artifacts, its status.
    :func:`_task_of` numbers what it decodes in the same order."""
    if type(task) is not Task:
        raise _Unencodable(task)
    task_id, context_id = task.id, task.context_id
    history, artifacts, status = task.history, task.artifacts, task.status
    if type(history) is not tuple or type(artifacts) is not tuple:
        raise _Unencodable(task)
    node_id, node_context = _id(task_id), _id(context_id)
    history_nodes = tuple([_message(m, task_id, context_id) for m in history])
    # Numbered by position (a value met twice keeps its first number: the decoder lists both).
    for number, message in enumerate(history):
        refs.setdefault(id(message), number)
    artifact_nodes = tuple([_artifact(a) for a in artifacts])
    for number, artifact in enumerate(artifacts, len(history)):
        refs.setdefault(id(artifact), number)
    status_node = _status(status, task_id, context_id, refs)
    refs.setdefault(id(status), len(history) + len(artifacts))
    return (node_id, node_context, history_nodes, artifact_nodes, status_node, task.metadata)


def _push_config(config: Any, task_id: str) -> tuple[Any, ...]:
    if type(config) is not TaskPushNotificationConfig:
        raise _Unencodable(config)
    auth: Any = config.authentication
    if auth is not None:
        if type(auth) is not AuthenticationInfo:
            raise _Unencodable(auth)
        auth = (auth.scheme, auth.credentials)
    of_task = config.task_id
    return (
        config.url,
        config.tenant,
        config.id,
        True if of_task is task_id else _other(of_task, task_id),
        config.token,
        auth,
    )


def _event(event: Any, task_id: str, context_id: str, refs: dict[int, int], marker: object) -> Any:
    kind = type(event)
    if kind is TaskStatusUpdateEvent or kind is TaskArtifactUpdateEvent:
        of_task, of_context = event.task_id, event.context_id
        of_task = True if of_task is task_id else _other(of_task, task_id)
        of_context = True if of_context is context_id else _other(of_context, context_id)
        if kind is TaskStatusUpdateEvent:
            status = event.status
            ref: Any = refs.get(id(status))
            if ref is None:
                ref = _status(status, task_id, context_id, refs)
            return (_STATUS_EVENT, of_task, of_context, ref, event.metadata)
        artifact = event.artifact
        ref = refs.get(id(artifact))
        if ref is None:
            ref = _artifact(artifact)
        return (
            _ARTIFACT_EVENT,
            of_task,
            of_context,
            ref,
            event.append,
            event.last_chunk,
            event.metadata,
            event.index,
        )
    if event is marker:
        return None
    if kind is Message:
        ref = refs.get(id(event))
        return (_MESSAGE_EVENT, _message(event, task_id, context_id) if ref is None else ref)
    if kind is Task:
        return (_TASK_EVENT, _task(event, {}))
    raise _Unencodable(event)


def _tree(record: TaskRecord, log: Sequence[object], marker: object) -> Any:
    """What :func:`encode` pickles: ``(record, events)``, as the nodes above."""
    owner = record.owner
    if type(record) is not TaskRecord or type(owner) is not Owner:
        raise _Unencodable(record)
    task = record.task
    refs: dict[int, int] = {}
    task_node = _task(task, refs)
    task_id, context_id = task.id, task.context_id
    push_configs = record.push_configs
    if type(push_configs) is not tuple:
        raise _Unencodable(push_configs)
    return (
        (
            task_node,
            owner.principal,
            owner.tenant,
            _time(record.created_at),
            record.run,
            record.running,
            record.skill_id,
            record.seq,
            record.replied,
            _messages(record.messages),
            tuple([_push_config(c, task_id) for c in push_configs]) if push_configs else (),
            record.key,
        ),
        tuple([_event(e, task_id, context_id, refs, marker) for e in log]),
    )


# --- decoding -----------------------------------------------------------------------------------


_new = object.__new__
# The setters of a Part's slots, in field order.
_PART_SLOTS = tuple(Part.__dict__[f.name] for f in attrs.fields(Part))
# Its slots are its fields alone (no cached hash to set up), and its __init__ does no more than
# fill them and check them: else _text_part would build a part its __init__ would not. (A
# guard run once at import on the model's own Part: it raises only when Part changes so that
# this module must change with it, hence the pragma: no test can reach the raise.)
if (  # pragma: no cover
    not all(type(slot).__name__ == "member_descriptor" for slot in _PART_SLOTS)
    or set(getattr(Part, "__slots__", ())) != {*(f.name for f in attrs.fields(Part)), "__weakref__"}
    or hasattr(Part, "__attrs_post_init__")
    or any(f.converter is not None for f in attrs.fields(Part))
):
    raise RuntimeError("a2a_core.store._compact builds a Part in its slots: it can no longer")
_SET_TEXT, _SET_RAW, _SET_URL, _SET_DATA, _SET_METADATA, _SET_FILENAME, _SET_MEDIA_TYPE = (
    slot.__set__ for slot in _PART_SLOTS
)


def _text_part(text: str) -> Part:
    """``Part(text)``, as its ``__init__`` makes it but for the check that it holds one content
    (it holds a text: it did when encoded). Most parts are texts, and the check is a call of
    its own: this takes two thirds of the time."""
    part = _new(Part)
    _SET_TEXT(part, text)
    _SET_RAW(part, None)
    _SET_URL(part, None)
    _SET_DATA(part, None)
    _SET_METADATA(part, None)
    _SET_FILENAME(part, "")
    _SET_MEDIA_TYPE(part, "")
    return part


#: ``datetime`` as pickle calls it: from the bytes of its fields (which typeshed does not know).
_from_state: Any = datetime


def _time_of(node: Any) -> datetime | None:
    if type(node) is bytes:
        return _from_state(node, UTC)  # type: ignore[no-any-return]
    if node is None:
        return None
    return datetime.fromisoformat(node)


def _message_of(node: Any, task_id: str, context_id: str) -> Message:
    message_id, role, parts, of_context, of_task, metadata, extensions, references = node
    return Message(
        _uuid_text(message_id) if type(message_id) is bytes else message_id,
        _ROLES[role],
        tuple([_text_part(p) if type(p) is str else Part(*p) for p in parts]),
        context_id if of_context is True else of_context,
        task_id if of_task is True else of_task,
        metadata,
        extensions,
        references,
    )


def _artifact_of(node: Any) -> Artifact:
    artifact_id, parts, name, description, metadata, extensions = node
    return Artifact(
        _uuid_text(artifact_id) if type(artifact_id) is bytes else artifact_id,
        tuple([_text_part(p) if type(p) is str else Part(*p) for p in parts]),
        name,
        description,
        metadata,
        extensions,
    )


def _status_of(node: Any, task_id: str, context_id: str, shared: list[Any]) -> TaskStatus:
    state, message, timestamp = node
    if type(message) is int:
        message = shared[message]
    elif message is not None:
        message = _message_of(message, task_id, context_id)
    return TaskStatus(_STATES[state], message, _time_of(timestamp))


def _task_of(node: Any, shared: list[Any]) -> Task:
    """The task of ``node``, numbering in ``shared`` what its events may repeat (as
    :func:`_task` did)."""
    task_id, context_id, history_nodes, artifact_nodes, status_node, metadata = node
    if type(task_id) is bytes:
        task_id = _uuid_text(task_id)
    if type(context_id) is bytes:
        context_id = _uuid_text(context_id)
    history = tuple([_message_of(m, task_id, context_id) for m in history_nodes])
    shared += history
    artifacts = tuple([_artifact_of(a) for a in artifact_nodes])
    shared += artifacts
    status = _status_of(status_node, task_id, context_id, shared)
    shared.append(status)
    return Task(task_id, status, context_id, artifacts, history, metadata)


def _push_config_of(node: Any, task_id: str) -> TaskPushNotificationConfig:
    url, tenant, config_id, of_task, token, auth = node
    return TaskPushNotificationConfig(
        url,
        tenant,
        config_id,
        task_id if of_task is True else of_task,
        token,
        None if auth is None else AuthenticationInfo(*auth),
    )


def _record_of(node: Any, version: int, shared: list[Any]) -> TaskRecord:
    (
        task_node,
        principal,
        tenant,
        created_at,
        run,
        running,
        skill_id,
        seq,
        replied,
        messages,
        push_configs,
        key,
    ) = node
    task = _task_of(task_node, shared)
    return TaskRecord(
        task,
        Owner(principal, tenant),
        version,
        _time_of(created_at),  # type: ignore[arg-type]
        run,
        running,
        skill_id,
        seq,
        replied,
        tuple(
            [
                (
                    _uuid_text(message_id) if type(message_id) is bytes else message_id,
                    b2a_base64(fingerprint, newline=False).decode()
                    if type(fingerprint) is bytes
                    else fingerprint,
                )
                for message_id, fingerprint in messages
            ]
        ),
        tuple([_push_config_of(c, task.id) for c in push_configs]) if push_configs else (),
        key,
    )


def _event_of(node: Any, task_id: str, context_id: str, shared: list[Any], marker: object) -> Any:
    if node is None:
        return marker
    kind = node[0]
    if kind == _STATUS_EVENT:
        _, of_task, of_context, status, metadata = node
        return TaskStatusUpdateEvent(
            task_id if of_task is True else of_task,
            context_id if of_context is True else of_context,
            shared[status]
            if type(status) is int
            else _status_of(status, task_id, context_id, shared),
            metadata,
        )
    if kind == _ARTIFACT_EVENT:
        _, of_task, of_context, artifact, append, last_chunk, metadata, index = node
        return TaskArtifactUpdateEvent(
            task_id if of_task is True else of_task,
            context_id if of_context is True else of_context,
            shared[artifact] if type(artifact) is int else _artifact_of(artifact),
            append,
            last_chunk,
            metadata,
            index,
        )
    if kind == _MESSAGE_EVENT:
        message = node[1]
        return (
            shared[message] if type(message) is int else _message_of(message, task_id, context_id)
        )
    return _task_of(node[1], [])


# --- the blob -----------------------------------------------------------------------------------


class _Pickler(pickle.Pickler):
    """Writes the values Python's own types hold (``str``, ``int``, ``float``, ``bytes``,
    ``bytearray``, ``tuple``, ``list``, ``dict``, ``set``, ``frozenset``, ``None``, ``True``,
    ``False``) as they are, and refuses any other: pickle asks :meth:`reducer_override` of
    every value but those."""

    def reducer_override(self, obj: Any) -> Any:
        raise _Unencodable(obj)


def _dumps(tree: Any) -> bytes:
    out = io.BytesIO()
    pickler = _Pickler(out, 5)
    # Every value as it comes, none as a reference to one already written: the same tree is the
    # same bytes whichever of its texts happen to be one object, as deflate's dictionary wants.
    # (Only the task's own values are shared, and those the tree already writes once.)
    pickler.fast = True
    try:
        pickler.dump(tree)
    except (ValueError, RecursionError) as error:  # a value holding itself, or nested too deep
        raise _Unencodable(tree) from error
    return out.getvalue()


def _example() -> bytes:
    """The preset dictionary: the encodings of typical settled tasks, so that deflate finds
    what most tasks share there rather than spelling it out. The likeliest (an echo that
    completed) comes last, nearest to what deflate compresses; before it, a task answered with
    a message, and one that asked the user a question first."""
    when = datetime(2026, 1, 1, tzinfo=UTC)
    fingerprint = "A" * 24

    def uuid(n: int) -> str:
        return f"{n:08x}-0000-4000-8000-{n:012x}"

    def dump(task: Task, messages: tuple[Message, ...], *log: object) -> bytes:
        record = TaskRecord(
            task,
            Owner("anonymous"),
            len(log),
            when,
            run=len(messages),
            seq=len(log),
            messages=tuple((m.message_id, fingerprint) for m in messages),
        )
        return _dumps(_tree(record, (None, *log[1:]), None))

    # Asked for more, then completed with an artifact.
    task_id, context_id = uuid(1), uuid(2)
    first = Message(uuid(3), Role.USER, (Part("hello"),), context_id, task_id)
    question = Message(uuid(4), Role.AGENT, (Part("which one?"),), context_id, task_id)
    second = Message(uuid(5), Role.USER, (Part("this one"),), context_id, task_id)
    asked = TaskStatus(TaskState.INPUT_REQUIRED, question, when)
    artifact = Artifact(uuid(6), (Part("result"),))
    done = TaskStatus(TaskState.COMPLETED, timestamp=when)
    task = Task(task_id, done, context_id, (artifact,), (first, question, second))
    asked_more = dump(
        task,
        (first, second),
        None,
        TaskStatusUpdateEvent(task_id, context_id, asked),
        TaskStatusUpdateEvent(task_id, context_id, TaskStatus(TaskState.WORKING, None, when)),
        TaskArtifactUpdateEvent(task_id, context_id, artifact, last_chunk=True, index=0),
        TaskStatusUpdateEvent(task_id, context_id, done),
    )
    # Answered with a message.
    task_id, context_id = uuid(7), uuid(8)
    message = Message(uuid(9), Role.USER, (Part("hello"),), context_id, task_id)
    reply = Message(uuid(10), Role.AGENT, (Part("done"),), context_id, task_id)
    done = TaskStatus(TaskState.COMPLETED, reply, when)
    task = Task(task_id, done, context_id, history=(message,))
    answered = dump(task, (message,), None, TaskStatusUpdateEvent(task_id, context_id, done))
    # An echo.
    task_id, context_id = uuid(11), uuid(12)
    message = Message("m-1", Role.USER, (Part("hello"),), context_id, task_id)
    artifact = Artifact("echo", (Part("hello"),))
    done = TaskStatus(TaskState.COMPLETED, timestamp=when)
    task = Task(task_id, done, context_id, (artifact,), (message,))
    echo = dump(
        task,
        (message,),
        None,
        TaskArtifactUpdateEvent(task_id, context_id, artifact, last_chunk=True, index=0),
        TaskStatusUpdateEvent(task_id, context_id, done),
    )
    return asked_more + answered + echo


_ZDICT = _example()
#: Raw deflate (no header or checksum: the bytes never leave the process), with a window of
#: 2 KiB: the dictionary and a task together fit in it, and a compressor copied for each task
#: copies the window (copying the default 32 KiB one took about as long as the rest of an
#: encode).
_WBITS = -11
#: Deflate's effort: the fastest finds all but a byte or two of what the slowest does here.
_LEVEL = 1
#: Deflate's hash tables: a few hundred bytes need nothing like the default's (8).
_MEM_LEVEL = 2
_DEFLATE = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, _MEM_LEVEL, 0, _ZDICT)


def encode(record: TaskRecord, log: Sequence[StreamEvent], marker: object) -> bytes | None:
    """``record`` and its event ``log`` as one blob, or ``None`` if a value there has no
    encoding. ``marker`` (an object that may stand in the log for an event) is kept as such.

    The blob starts with the record's state and version, readable without decoding the rest
    (:func:`state_of`, :func:`version_of`): a commit's version check and a listing's state
    filter ask for nothing else.
    """
    version = record.version
    if type(version) is not int or version < 0:
        return None
    try:
        data = _dumps(_tree(record, log, marker))
    except _Unencodable:
        return None
    first = _FORMAT << 4 | _STATE_INDEX[record.state]
    if version < 256:
        head = bytes((first, 1, version))
    else:
        size = (version.bit_length() + 7) // 8
        head = bytes((first, size)) + version.to_bytes(size)
    deflate = _DEFLATE.copy()
    return b"".join((head, deflate.compress(data), deflate.flush()))


def state_of(blob: bytes) -> TaskState:
    """The state of the record in ``blob``."""
    return _STATES[blob[0] & 15]


def version_of(blob: bytes) -> int:
    """The version of the record in ``blob``."""
    return int.from_bytes(blob[2 : 2 + blob[1]])


def _load(blob: bytes) -> Any:
    if blob[0] >> 4 != _FORMAT:
        raise ValueError("not a blob this version of a2a_core made")
    inflate = zlib.decompressobj(_WBITS, _ZDICT)
    # Only ever bytes that encode() made in this process: nothing from outside is loaded.
    return pickle.loads(inflate.decompress(blob[2 + blob[1] :]))  # noqa: S301


def decode(blob: bytes, marker: object) -> tuple[TaskRecord, tuple[StreamEvent, ...]]:
    """The record and log :func:`encode` made ``blob`` of (``marker`` as it was given)."""
    record_node, event_nodes = _load(blob)
    shared: list[Any] = []
    record = _record_of(record_node, version_of(blob), shared)
    task_id, context_id = record.task.id, record.task.context_id
    return record, tuple([_event_of(n, task_id, context_id, shared, marker) for n in event_nodes])


def decode_record(blob: bytes) -> TaskRecord:
    """The record alone: most reads (a GetTask, a listing page) want no events, and building
    the objects is most of what decoding costs."""
    return _record_of(_load(blob)[0], version_of(blob), [])
