"""The gRPC binding's public parts: what an adapter provides (:class:`PayloadCodec`) and the
framing and status helpers it may want (see ``docs/core.md``, "The gRPC binding")."""

from .front._grpc import (
    GRPC_CODES,
    GRPC_CONTENT_TYPE,
    GRPC_PREFIX,
    PayloadCodec,
    PayloadError,
    frame,
    grpc_code,
    grpc_timeout,
    percent_encode,
    status_details,
    unframe,
)

__all__ = [
    "GRPC_CODES",
    "GRPC_CONTENT_TYPE",
    "GRPC_PREFIX",
    "PayloadCodec",
    "PayloadError",
    "frame",
    "grpc_code",
    "grpc_timeout",
    "percent_encode",
    "status_details",
    "unframe",
]
