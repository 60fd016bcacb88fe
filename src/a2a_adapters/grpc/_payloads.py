"""The gRPC payload codec the core is given: protobuf bytes to ProtoJSON and back.

ProtoJSON is what the core's v1.0 codec reads and writes for every binding, so turning each
message into it (``google.protobuf.json_format``) is all the protobuf there is: the core never
sees a message object, and gRPC accepts and refuses exactly what JSON-RPC does.

Protobuf's wire can carry what JSON cannot: a ``Value`` holding NaN or an infinity, a
``Timestamp`` outside years 1 to 9999 or with nanoseconds out of range. ProtoJSON has no form for
those, so they are refused here, naming the field, as a JSON client's ``NaN`` is refused before
it is parsed.
"""

import math
from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError
from google.protobuf.message import Message as ProtoMessage

from a2a_core.grpc import PayloadError

from ._proto import a2a_pb2

__all__ = ["METHODS", "ProtoPayloads"]

#: Each method of ``lf.a2a.v1.A2AService``: its request message, and its response message (each
#: event's, for the two streaming methods), read from the service's own descriptor.
METHODS: Mapping[str, tuple[type[ProtoMessage], type[ProtoMessage]]] = {
    method.name: (
        message_factory.GetMessageClass(method.input_type),
        message_factory.GetMessageClass(method.output_type),
    )
    for method in a2a_pb2.DESCRIPTOR.services_by_name["A2AService"].methods
}


class ProtoPayloads:
    """:class:`a2a_core.grpc.PayloadCodec` on the module generated from the spec's proto."""

    def decode(self, method: str, payload: bytes) -> Any:
        message = METHODS[method][0]()
        try:
            message.ParseFromString(payload)
        except DecodeError as error:
            raise PayloadError(str(error) or "not a protobuf message") from None
        # ProtoJSON: camelCase names, enum names, bytes in base64, Struct as JSON; fields at
        # their defaults are left out, as a JSON client leaves them out.
        try:
            return json_format.MessageToDict(message)
        except (json_format.SerializeToJsonError, ValueError) as error:
            found = _unrepresentable(message, "")
            if found is None:  # pragma: no cover - json_format refused something else
                raise PayloadError(f"it has no ProtoJSON form: {error}") from None
            raise PayloadError(found[1], field=found[0]) from None

    def encode(self, method: str, value: Any) -> bytes:
        message = METHODS[method][1]()
        # Unknown fields are what the JSON bindings add for older clients (v0.3's card fields).
        json_format.ParseDict(value, message, ignore_unknown_fields=True)
        data: bytes = message.SerializeToString()
        return data


#: The seconds a Timestamp may hold (0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z).
_SECONDS = (-62_135_596_800, 253_402_300_799)
_NANOS = (0, 999_999_999)


def _unrepresentable(message: ProtoMessage, path: str) -> tuple[str, str] | None:
    """The ProtoJSON path of the first value in ``message`` that ProtoJSON cannot write, and
    why (a walk made only once ``json_format`` has refused the message)."""
    kind = message.DESCRIPTOR.full_name
    if kind == "google.protobuf.Value":
        which = message.WhichOneof("kind")
        if which == "number_value" and not math.isfinite(message.number_value):
            return path, f"{message.number_value} is not a number JSON can carry"
        if which in ("struct_value", "list_value"):
            return _unrepresentable(getattr(message, which), path)
        return None
    if kind == "google.protobuf.Struct":
        for key, value in message.fields.items():
            found = _unrepresentable(value, f"{path}.{key}" if path else key)
            if found is not None:
                return found
        return None
    if kind == "google.protobuf.ListValue":
        for index, value in enumerate(message.values):
            found = _unrepresentable(value, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    if kind in ("google.protobuf.Timestamp", "google.protobuf.Duration"):
        if kind.endswith("Timestamp") and not _SECONDS[0] <= message.seconds <= _SECONDS[1]:
            return path, f"{message.seconds} seconds is outside years 1 to 9999"
        if kind.endswith("Timestamp") and not _NANOS[0] <= message.nanos <= _NANOS[1]:
            return path, f"{message.nanos} nanoseconds is outside 0 to 999999999"
        return None
    for field, value in message.ListFields():
        if field.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        where = f"{path}.{field.json_name}" if path else field.json_name
        if field.message_type.GetOptions().map_entry:
            items = [(f"{where}.{key}", value[key]) for key in value]
        elif field.is_repeated:
            items = [(f"{where}[{n}]", item) for n, item in enumerate(value)]
        else:
            items = [(where, value)]
        for at, item in items:
            if isinstance(item, ProtoMessage):
                found = _unrepresentable(item, at)
                if found is not None:
                    return found
    return None
