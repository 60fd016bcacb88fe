"""The gRPC payload codec the core is given: protobuf bytes to ProtoJSON and back.

ProtoJSON is what the core's v1.0 codec reads and writes for every binding, so turning each
message into it (``google.protobuf.json_format``) is all the protobuf there is: the core never
sees a message object, and gRPC accepts and refuses exactly what JSON-RPC does.
"""

from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format, message_factory
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
        return json_format.MessageToDict(message)

    def encode(self, method: str, value: Any) -> bytes:
        message = METHODS[method][1]()
        # Unknown fields are what the JSON bindings add for older clients (v0.3's card fields).
        json_format.ParseDict(value, message, ignore_unknown_fields=True)
        data: bytes = message.SerializeToString()
        return data
