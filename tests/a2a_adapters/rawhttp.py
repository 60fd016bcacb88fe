"""HTTP/1.1 over raw sockets, for tests that must control every byte a client sends and see
exactly when the server answers or hangs up (no client library would trickle a header).

Every read has a deadline; nothing here waits unbounded.
"""

import select
import socket
import time
from urllib.parse import urlsplit

import attrs

#: Seconds any one wait for the server may take before the test fails.
DEADLINE = 10.0


@attrs.frozen
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname is not None
    assert parts.port is not None
    return parts.hostname, parts.port


def connect(url: str) -> socket.socket:
    sock = socket.create_connection(address(url), timeout=DEADLINE)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def head(
    method: str, target: str, headers: dict[str, str] | None = None, *, end: bool = True
) -> bytes:
    """A request head (``end``: with the blank line that finishes it)."""
    lines = [f"{method} {target} HTTP/1.1", "Host: test"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    text = "\r\n".join(lines) + "\r\n"
    return (text + "\r\n" if end else text).encode("latin-1")


def read_answer(sock: socket.socket, *, timeout: float = DEADLINE) -> Answer:
    """Read one response with a ``content-length`` body (or chunked, ended by the last chunk)."""
    deadline = time.monotonic() + timeout
    data = b""
    while b"\r\n\r\n" not in data:
        data += _recv(sock, deadline)
    raw_head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *lines = raw_head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        length = int(headers["content-length"])
        while len(rest) < length:
            rest += _recv(sock, deadline)
    elif headers.get("transfer-encoding") == "chunked":
        while not rest.endswith(b"0\r\n\r\n"):
            rest += _recv(sock, deadline)
    return Answer(int(status_line.split()[1]), headers, rest)


def _recv(sock: socket.socket, deadline: float) -> bytes:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("no (whole) answer from the server in time")
    sock.settimeout(left)
    chunk = sock.recv(65536)
    if not chunk:
        raise ConnectionError("the server closed the connection before answering")
    return chunk


def closed(sock: socket.socket, *, timeout: float = DEADLINE) -> bool:
    """Whether the server closes ``sock`` (end of file or reset) within ``timeout``; anything
    it sends before that is read and dropped."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            if not sock.recv(65536):
                return True
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False
    return False


def readable(sock: socket.socket, timeout: float) -> bool:
    return bool(select.select([sock], [], [], timeout)[0])


def send_slowly(sock: socket.socket, data: bytes, *, every: float, timeout: float) -> float:
    """Send ``data`` a byte at a time, one every ``every`` seconds, until the server hangs up
    or answers; returns the seconds from the first byte until then. Fails the test if the server
    neither answers nor hangs up within ``timeout``."""
    start = time.monotonic()
    for index in range(len(data)):
        try:
            sock.sendall(data[index : index + 1])
        except (BrokenPipeError, ConnectionResetError):
            return time.monotonic() - start
        if readable(sock, every):
            return time.monotonic() - start
        if time.monotonic() - start > timeout:
            break
    raise AssertionError(f"the server was still reading after {timeout} s")
