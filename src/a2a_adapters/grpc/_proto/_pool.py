"""The descriptor pool of the generated ``a2a_pb2`` (see ``_generate``): a pool of our own, so
that another ``lf.a2a.v1`` (the official SDK's) can live in the default pool of the same process.

A pool holds a file only once it holds the files it imports: those (``google/api/*``,
``google/protobuf/*``) are copied in from the default pool, where their modules put them.
"""

from google.api import annotations_pb2, client_pb2, field_behavior_pb2
from google.protobuf import descriptor_pool, empty_pb2, struct_pb2, timestamp_pb2
from google.protobuf.descriptor import FileDescriptor

__all__ = ["POOL"]

POOL = descriptor_pool.DescriptorPool()


def _add(file: FileDescriptor, seen: set[str]) -> None:
    if file.name in seen:
        return
    seen.add(file.name)
    for dependency in file.dependencies:
        _add(dependency, seen)
    POOL.AddSerializedFile(file.serialized_pb)


_seen: set[str] = set()
_IMPORTED = (annotations_pb2, client_pb2, field_behavior_pb2, empty_pb2, struct_pb2, timestamp_pb2)
for _module in _IMPORTED:
    _add(_module.DESCRIPTOR, _seen)
