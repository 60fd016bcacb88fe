"""The HTTP front: an ``HttpRequest`` in, inputs for the deciders out; effects in, an
``HttpResponse`` or stream frames out. JSON-RPC, HTTP+JSON (REST) and gRPC routes, CORS,
health, extensions, in every dialect.

Above the deciders (it encodes their effects) and below the machine (which drives it).
Its public names are handed on by ``a2a_core.transport`` and ``a2a_core.grpc``.
"""
