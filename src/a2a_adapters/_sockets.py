"""Listening sockets, made before the server starts (so that port 0 can be read back)."""

import socket

__all__ = ["bind_socket"]


def bind_socket(host: str, port: int, *, backlog: int = 1024) -> socket.socket:
    """A bound, listening TCP socket (port 0 picks a free port: read it back from the socket).

    It listens at once, so a client may connect as soon as this returns; connections queue
    until the server starts accepting them.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP spelled out: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose
    # proto says TCP, and with Nagle on a kept-alive response body waits ~40 ms behind its
    # headers.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    return sock
