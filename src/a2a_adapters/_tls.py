"""TLS for both adapters: the server's context, from a certificate and its key.

Loaded when the server is set up, so that a missing file or a key that does not match its
certificate is refused at start-up with a message saying which, not at the first handshake.
"""

import ssl

__all__ = ["server_context"]


def server_context(certfile: str | None, keyfile: str | None) -> ssl.SSLContext | None:
    """The TLS context serving ``certfile`` (PEM; ``keyfile``, or a key in the same file), or
    ``None`` without a certificate. Raises :class:`ValueError` saying what is wrong."""
    if certfile is None:
        if keyfile is not None:
            raise ValueError("ssl_keyfile needs ssl_certfile: the certificate the key is for")
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(certfile, keyfile)
    except FileNotFoundError as error:
        raise ValueError(f"cannot read {error.filename}: no such file") from None
    except OSError as error:  # ssl.SSLError included: not PEM, or a key of another cert
        reason = getattr(error, "reason", None) or error.strerror or str(error)
        raise ValueError(
            f"cannot load the certificate {certfile}"
            + (f" with the key {keyfile}" if keyfile else "")
            + f": {reason}"
        ) from None
    # HTTP/1.1 only: what both adapters speak over TLS.
    context.set_alpn_protocols(["http/1.1"])
    return context
