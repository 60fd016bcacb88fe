"""A settled task in one compact blob: how the memory store keeps tasks that can no longer change.

A task that has settled (terminal, no run under way) is read, listed and expired for as long as
the store keeps it, but written again only rarely. As live objects, its record and its event log
are a graph of some thirty Python objects (the task, its status, history, artifacts, parts, the
events that repeat them, datetimes, the owner): about 1,700 bytes for an echo task. Encoded, the
same values take about a tenth of that, which is most of what ``MemoryTasks`` holds per task.

The encoding is a tree of tuples, lists and plain values that :mod:`marshal` writes: every attrs
instance of the model becomes ``(code, field, ...)`` (trailing fields at their defaults left
out), a model tuple becomes a list, a datetime becomes its microseconds, and a value shared by
several objects (the artifact a task and its artifact event both hold, the task id every event
repeats) is written once, since :mod:`marshal` writes an object it meets again as a reference.
The result is deflated with a preset dictionary (an encoded example task), so that what every
task spells alike (field defaults, codes, a completed status) costs a few bits.

:func:`decode` rebuilds values equal to those encoded (``decode(encode(r, log)) == (r, log)``).
A value the encoding does not know (an object an agent put in a ``Part``'s data that JSON would
not hold) makes :func:`encode` return ``None``, and the store keeps that task as it is: the
compact form is an economy, never a change of what a read returns. Both run in memory, on bytes
this process made, which is why :mod:`marshal` (not a format for files or the network) serves.
"""

import marshal
import operator
import zlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs

from ._model import (
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
from ._records import Owner, TaskRecord

__all__ = ["decode", "decode_record", "encode", "state_of", "version_of"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)

#: The attrs classes a record and its events are made of, each with the code that names it.
_CLASSES: dict[type, str] = {
    cls: code
    for code, cls in zip(
        "TSMPARUVCIO",
        (
            Task,
            TaskStatus,
            Message,
            Part,
            Artifact,
            TaskRecord,
            TaskStatusUpdateEvent,
            TaskArtifactUpdateEvent,
            TaskPushNotificationConfig,
            AuthenticationInfo,
            Owner,
        ),
        strict=True,
    )
}
#: Per class: its code, a getter of all its fields' values (in declaration order), their
#: defaults, how many fields have none (those are always written) and how many it has.
_SPECS: dict[type, tuple[str, Any, tuple[Any, ...], int, int]] = {
    cls: (
        code,
        operator.attrgetter(*(f.name for f in attrs.fields(cls))),
        tuple(f.default for f in attrs.fields(cls)),
        sum(f.default is attrs.NOTHING for f in attrs.fields(cls)),
        len(attrs.fields(cls)),
    )
    for cls, code in _CLASSES.items()
}
_BUILD: dict[str, type] = {code: cls for cls, code in _CLASSES.items()}
#: Values that stand for themselves in the tree.
_PLAIN = frozenset({str, int, bool, type(None), float, bytes})
_NODES = frozenset({tuple, list})

#: Codes of values other than model instances (a node is ``(code, ...)``).
_DATETIME_UTC = "d"  # (code, microseconds since 1970)
_DATETIME = "e"  # (code, ISO 8601 text): any other datetime
_LIST = "l"  # (code, item, ...): a JSON array (a list, told apart from a model tuple)
_DICT = "m"  # (code, {key: value}): a JSON object
#: The enums' members, each a node of its code alone.
_CONSTANTS: dict[str, Any] = {
    chr(0x100 + index): member for index, member in enumerate((*TaskState, *Role))
}
_CONSTANT_CODES: dict[Any, str] = {member: code for code, member in _CONSTANTS.items()}
#: The code of the marker a caller asks to be kept as such (the store's ``_CREATED``).
_MARKER = chr(0xFF)


class _Unencodable(Exception):
    """A value the encoding does not know."""


class _Encoder:
    __slots__ = ("marker", "memo")

    def __init__(self, marker: object) -> None:
        self.marker = marker
        # id -> node, so that an object met twice becomes one node (written once by marshal).
        self.memo: dict[int, Any] = {}

    def node(self, value: Any) -> Any:
        # Every settled task's every object passes here, so nothing here is a call that need
        # not be: dicts are asked with ``in`` and subscripts rather than ``get``, the id is
        # taken once, a class's number of fields is known.
        kind = type(value)
        if kind in _PLAIN:
            return value
        key = id(value)
        memo = self.memo
        if key in memo:
            return memo[key]
        node: Any
        if kind in _SPECS:
            code, fields, defaults, required, end = _SPECS[kind]
            values = fields(value)
            # Trailing fields at their defaults are left out (the constructor fills them in):
            # even deflated, they would be a tenth of a settled task's blob. (Exactly the
            # default: ``0 == False`` and ``() == []`` must not pass for each other.)
            while end > required:
                last, default = values[end - 1], defaults[end - 1]
                if type(last) is not type(default) or last != default:
                    break
                end -= 1
            node = (code, *[v if type(v) in _PLAIN else self.node(v) for v in values[:end]])
        elif kind is tuple:
            node = [v if type(v) in _PLAIN else self.node(v) for v in value]
        elif kind is datetime:
            if value.tzinfo is UTC:
                node = (_DATETIME_UTC, (value - _EPOCH) // _MICRO)
            else:
                node = (_DATETIME, value.isoformat())
        elif kind is list:
            node = (_LIST, *[self.node(item) for item in value])
        elif kind is dict:
            if not all(type(key) is str for key in value):
                raise _Unencodable(value)
            node = (_DICT, {key: self.node(item) for key, item in value.items()})
        elif value is self.marker:
            node = (_MARKER,)
        elif kind is TaskState or kind is Role:
            node = (_CONSTANT_CODES[value],)
        else:
            raise _Unencodable(value)
        memo[key] = node
        return node


class _Decoder:
    __slots__ = ("marker", "memo")

    def __init__(self, marker: object) -> None:
        self.marker = marker
        self.memo: dict[int, Any] = {}

    def value(self, node: Any) -> Any:
        cached = self.memo.get(id(node))
        if cached is not None:
            return cached
        value: Any
        if type(node) is list:
            value = tuple([self.value(v) if type(v) in _NODES else v for v in node])
        else:
            code = node[0]
            cls = _BUILD.get(code)
            if cls is not None:
                value = cls(*[self.value(v) if type(v) in _NODES else v for v in node[1:]])
            elif code == _DATETIME_UTC:
                value = _EPOCH + node[1] * _MICRO
            elif code == _DATETIME:
                value = datetime.fromisoformat(node[1])
            elif code == _LIST:
                value = [self.value(v) if type(v) in _NODES else v for v in node[1:]]
            elif code == _DICT:
                value = {k: self.value(v) if type(v) in _NODES else v for k, v in node[1].items()}
            elif code == _MARKER:
                value = self.marker
            else:
                value = _CONSTANTS[code]
        self.memo[id(node)] = value
        return value


def _example() -> bytes:
    """The preset dictionary: the encoding of a typical settled task (an echo that completed),
    so that deflate finds what most tasks share in it rather than spelling it out."""
    when = datetime(2026, 1, 1, tzinfo=UTC)
    part = Part(text="hello")
    message = Message("m-1", Role.USER, (part,), context_id="c", task_id="t")
    artifact = Artifact("echo", (part,))
    status = TaskStatus(TaskState.COMPLETED, timestamp=when)
    task = Task("t", status, context_id="c", artifacts=(artifact,), history=(message,))
    record = TaskRecord(task, Owner("anonymous"), 3, when, run=1, seq=3, messages=(("m-1", ""),))
    log = (
        TaskArtifactUpdateEvent("t", "c", artifact, last_chunk=True, index=0),
        TaskStatusUpdateEvent("t", "c", status),
    )
    encoder = _Encoder(None)
    return marshal.dumps((encoder.node(record), [encoder.node(e) for e in log]), 4)


_ZDICT = _example()
_WBITS = -15  # a raw deflate stream: no header or checksum, the bytes never leave the process
#: Deflate's effort: the default level finds nearly every match a settled task holds (most of it
#: is in the preset dictionary), for a fraction of the time of the best one.
_LEVEL = 6
#: Deflate's hash tables: a settled task's few hundred bytes need nothing like the default's
#: (8), and every encode sets its tables up afresh, so half of them cost less per task.
#: Decoding does not depend on it.
_MEM_LEVEL = 4


_STATES = tuple(TaskState)
_STATE_INDEX = {state: index for index, state in enumerate(_STATES)}


def encode(record: TaskRecord, log: Sequence[StreamEvent], marker: object) -> bytes | None:
    """``record`` and its event ``log`` as one blob, or ``None`` if a value there has no
    encoding. ``marker`` (an object that may stand in the log for an event) is kept as such.

    The blob starts with the record's state and version, readable without decoding the rest
    (:func:`state_of`, :func:`version_of`): a commit's version check and a listing's state
    filter ask for nothing else.
    """
    encoder = _Encoder(marker)
    try:
        tree = (encoder.node(record), [encoder.node(event) for event in log])
    except _Unencodable:
        return None
    deflate = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, _MEM_LEVEL, 0, _ZDICT)
    version = record.version.to_bytes((record.version.bit_length() + 7) // 8 or 1)
    head = bytes((_STATE_INDEX[record.state], len(version))) + version
    return head + deflate.compress(marshal.dumps(tree, 4)) + deflate.flush()


def state_of(blob: bytes) -> TaskState:
    """The state of the record in ``blob``."""
    return _STATES[blob[0]]


def version_of(blob: bytes) -> int:
    """The version of the record in ``blob``."""
    return int.from_bytes(blob[2 : 2 + blob[1]])


def _tree(blob: bytes) -> Any:
    inflate = zlib.decompressobj(_WBITS, _ZDICT)
    # Only ever bytes that encode() made in this process: nothing from outside is loaded.
    return marshal.loads(inflate.decompress(blob[2 + blob[1] :]))  # noqa: S302


def decode(blob: bytes, marker: object) -> tuple[TaskRecord, tuple[StreamEvent, ...]]:
    """The record and log :func:`encode` made ``blob`` of (``marker`` as it was given)."""
    record_node, log_nodes = _tree(blob)
    decoder = _Decoder(marker)
    record: TaskRecord = decoder.value(record_node)
    return record, tuple(decoder.value(node) for node in log_nodes)


def decode_record(blob: bytes) -> TaskRecord:
    """The record alone: most reads (a GetTask, a listing page) want no events, and building
    the objects is most of what decoding costs."""
    record: TaskRecord = _Decoder(None).value(_tree(blob)[0])
    return record
