"""The listening socket the adapters serve on."""

import socket

import pytest

from a2a_adapters._sockets import bind_socket


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_the_listening_socket_says_tcp_so_asyncio_turns_nagle_off(host: str) -> None:
    """asyncio sets TCP_NODELAY on accepted connections only when the socket's proto is TCP;
    with Nagle on, a kept-alive response body waits ~40 ms behind its headers."""
    with bind_socket(host, 0) as listening:
        assert listening.proto == socket.IPPROTO_TCP
        with socket.create_connection(listening.getsockname()[:2], timeout=5):
            accepted, _ = listening.accept()
        with accepted:
            assert accepted.proto == socket.IPPROTO_TCP
