"""A real ``redis-server`` for tests, on a free port of 127.0.0.1 (or a Unix socket only).

Never the machine's own Redis: each server here is a process of the test's, on a port it chose,
stopped by its PID. Without durability it keeps nothing on disk (``--save "" --appendonly no``);
with it, every write is in the append-only file before Redis answers (``--appendfsync
always``), so a SIGKILL and :meth:`RedisServer.restart` on the same port and directory lose
nothing acknowledged. Every wait is bounded.
"""

import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

__all__ = ["REDIS_SERVER", "RedisServer", "redis_available"]

#: The server binary the tests start (Debian's ``redis-server``).
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
#: Seconds a server may take to answer PING, or to exit.
START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0


def redis_available() -> bool:
    return Path(REDIS_SERVER).exists()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class RedisServer:
    """One ``redis-server`` process: :meth:`start`, :meth:`stop`, :meth:`kill`, :meth:`restart`.

    ``durable``: an append-only file written before every answer. ``unix_socket``: listen on
    a socket in the server's directory (a short path: a socket's may not pass 107 bytes) and on
    no TCP port at all (``--port 0``). ``password``: clients must ``AUTH`` with it. ``tls``: a
    certificate and its key (PEM files) for a TLS port beside the plain one (:attr:`tls_url`).
    ``options``: more of ``redis-server``'s command line (``["--key-load-delay", "200"]``).
    """

    def __init__(
        self,
        *,
        durable: bool = False,
        unix_socket: bool = False,
        password: str = "",
        tls: tuple[Path, Path] | None = None,
        options: Sequence[str] = (),
    ) -> None:
        self.durable = durable
        self.directory = Path(tempfile.mkdtemp(prefix="a2a-redis-"))
        self.unix_socket = self.directory / "redis.sock" if unix_socket else None
        self.port = 0 if unix_socket else _free_port()
        self.password = password
        self.tls = tls
        self.tls_port = _free_port() if tls else 0
        self.options = tuple(options)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        login = f":{self.password}@" if self.password else ""
        if self.unix_socket is not None:
            return f"unix://{login}{self.unix_socket}?db=0"
        return f"redis://{login}127.0.0.1:{self.port}/0"

    @property
    def tls_url(self) -> str:
        """The TLS port's URL, trusting the certificate (``tls``) as its own authority."""
        assert self.tls is not None, "started without tls"
        login = f":{self.password}@" if self.password else ""
        return f"rediss://{login}127.0.0.1:{self.tls_port}/0?ssl_ca_certs={self.tls[0]}"

    def _command(self) -> list[str]:
        command = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--dir", str(self.directory), "--logfile", "redis.log"]
        if self.durable:
            command += ["--appendonly", "yes", "--appendfsync", "always"]
        else:
            command += ["--appendonly", "no"]
        if self.unix_socket is not None:
            command += ["--unixsocket", str(self.unix_socket), "--unixsocketperm", "700"]
        if self.password:
            command += ["--requirepass", self.password]
        if self.tls is not None:
            cert, key = self.tls
            command += ["--tls-port", str(self.tls_port), "--tls-auth-clients", "no"]
            command += ["--tls-cert-file", str(cert), "--tls-key-file", str(key)]
        return [*command, *self.options]

    def start(self) -> "RedisServer":
        """Start the server and return once it answers PING."""
        self.launch()
        self._wait_for_ping()
        return self

    def launch(self) -> None:
        """Start the server and return at once (it may not listen yet, or still be loading
        its data: :meth:`wait` for it)."""
        assert self.process is None or self.process.poll() is not None, "already running"
        self.process = subprocess.Popen(
            self._command(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def wait(self) -> None:
        """Return once the server :meth:`launch` started answers PING."""
        self._wait_for_ping()

    def _connect(self) -> socket.socket:
        if self.unix_socket is not None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(0.5)
            sock.connect(str(self.unix_socket))
            return sock
        return socket.create_connection(("127.0.0.1", self.port), timeout=0.5)

    def _wait_for_ping(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited ({self.process.returncode}): {self.log}")
            try:
                with self._connect() as sock:
                    login = f"AUTH {self.password}\r\n".encode() if self.password else b""
                    sock.sendall(login + b"PING\r\n")
                    if b"+PONG" in sock.recv(64):
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.kill()
                raise TimeoutError(f"redis-server never answered PING: {self.log}")
            time.sleep(0.01)

    @property
    def log(self) -> str:
        path = self.directory / "redis.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it takes too long."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """SIGKILL: Redis writes nothing more, as in a crash."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(STOP_TIMEOUT)

    def restart(self) -> None:
        """Start again on the same port and directory (with what its append-only file holds)."""
        self.stop()
        self.start()

    def remove(self) -> None:
        """Stop it and remove its directory."""
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> "RedisServer":
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.remove()
