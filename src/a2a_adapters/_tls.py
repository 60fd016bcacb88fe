"""TLS for both adapters: the server's certificate and key files, checked at start-up.

They are named by path (``TlsFiles``, which needs no server's package) and handed to the servers
that speak TLS (uvicorn, and hypercorn, whose context offers ALPN ``h2`` for gRPC beside
``http/1.1``). They are loaded once when the server is set up (:func:`check`), so that a missing
file or a key that does not match its certificate is refused at start-up with a message saying
which, not at the first handshake.
"""

import ssl

import attrs

__all__ = ["TlsFiles", "check"]


@attrs.frozen
class TlsFiles:
    """A server's certificate (PEM, its chain after it) and private key, by path."""

    certfile: str
    keyfile: str


def check(tls: TlsFiles) -> None:
    """Load ``tls`` once; :class:`ValueError` saying what is wrong if it will not serve."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(tls.certfile, tls.keyfile)
    except FileNotFoundError as error:
        raise ValueError(f"cannot read {error.filename}: no such file") from None
    except OSError as error:  # ssl.SSLError included: not PEM, or a key of another cert
        reason = getattr(error, "reason", None) or error.strerror or str(error)
        raise ValueError(
            f"cannot load the certificate {tls.certfile}" + f" with the key {tls.keyfile}: {reason}"
        ) from None
