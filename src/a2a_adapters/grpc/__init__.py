"""The gRPC binding (``lf.a2a.v1.A2AService``) for both adapters: the payload codec the core is
given, and the ASGI application hypercorn serves over HTTP/2 (the ``grpc`` extra)."""

from a2a_adapters._extras import needs

with needs("grpc", "the gRPC binding"):
    from ._payloads import METHODS, ProtoPayloads

__all__ = ["METHODS", "ProtoPayloads"]
