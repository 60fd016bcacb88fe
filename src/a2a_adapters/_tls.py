"""What a server needs to speak TLS: its certificate and key files (kept apart from the servers
that use them, so that naming them needs no server's package)."""

import attrs

__all__ = ["TlsFiles"]


@attrs.frozen
class TlsFiles:
    """A server's certificate (PEM, its chain after it) and private key, by path."""

    certfile: str
    keyfile: str
