"""The deployment files of ``deploy/``, run as far as this machine can run them.

There is no container engine or init system here, so each file is taken apart and what it
would start is started for real: the compose file's replicas, with the settings it gives them,
on a Redis of the test's own (a task made through one is read through the other); the systemd
unit's command with its environment file (it serves, and stops cleanly on the SIGTERM systemd
sends), after ``systemd-analyze verify`` found nothing to say about the unit. The Dockerfile and
the nginx configuration are checked against what those runs need (the entry point, the extras,
the upstreams and the headers).
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from a2a_adapters.cli import env_variable, serve_options
from tests.a2a_adapters.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
CLI = Path(sys.executable).parent / "a2a-sansio"
START_TIMEOUT = 20.0
STOP_TIMEOUT = 30.0
V1 = {"content-type": "application/json", "a2a-version": "1.0"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def known_variables() -> set[str]:
    return {name for action in serve_options() if (name := env_variable(action))}


@contextmanager
def serving(env: Mapping[str, str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    """``a2a-sansio serve`` from the checkout (the image's and the unit's working directory),
    with ``env`` as its settings; killed on the way out if it did not stop."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("A2A_")}
    environment.update(env)
    server = subprocess.Popen(
        [str(CLI), "serve"],
        cwd=ROOT,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                assert time.monotonic() < deadline, "the server never listened"
                time.sleep(0.05)
        yield server
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(STOP_TIMEOUT)


def send(url: str, text: str) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": text, "role": "ROLE_USER", "parts": [{"text": text}]}},
    }
    answer: dict[str, Any] = httpx.post(url + "/", json=body, headers=V1, timeout=10).json()
    task: dict[str, Any] = answer["result"]["task"]
    return task


# --- docker compose ---------------------------------------------------------------------------


def compose() -> dict[str, Any]:
    found: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return found


def agents() -> dict[str, dict[str, Any]]:
    return {name: s for name, s in compose()["services"].items() if name.startswith("agent")}


def test_the_compose_file_gives_its_replicas_only_settings_the_server_knows() -> None:
    services = agents()
    assert len(services) >= 2
    known = known_variables()
    for name, service in services.items():
        unknown = set(service["environment"]) - known
        assert not unknown, f"{name}: {unknown}"
        assert service["build"]["dockerfile"] == "deploy/Dockerfile"
        assert "ports" not in service  # only the proxy reaches them
    assert compose()["services"]["redis"]["command"][1:] == [
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
    ]


def test_the_image_serves_what_the_compose_file_asks_of_it() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["a2a-sansio", "serve"]' in dockerfile
    (extras,) = re.findall(r"pip install --no-cache-dir '\.\[([a-z,]+)\]'", dockerfile)
    stores = {service["environment"]["A2A_STORE"].split(":")[0] for service in agents().values()}
    assert "redis" in stores
    assert set(extras.split(",")) >= {"asyncio", "redis"}
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".venv/" in ignored  # the build context is the checkout: not its environment


def test_the_compose_replicas_serve_one_set_of_tasks() -> None:
    with RedisServer() as redis:
        urls, servers = [], []
        try:
            for service in agents().values():
                env = {k: str(v) for k, v in service["environment"].items()}
                port = free_port()
                # What the container network names, here: its Redis, this machine's loopback.
                env["A2A_STORE"] = env["A2A_STORE"].replace("redis:6379", f"127.0.0.1:{redis.port}")
                env["A2A_HOST"], env["A2A_PORT"] = "127.0.0.1", str(port)
                started = serving(env, port)
                servers.append(started)
                started.__enter__()
                urls.append(f"http://127.0.0.1:{port}")
            task = send(urls[0], "made on the first")
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
            read = httpx.get(f"{urls[1]}/tasks/{task['id']}", headers=V1, timeout=10).json()
            assert read["id"] == task["id"]
            assert read["status"]["state"] == "TASK_STATE_COMPLETED"
        finally:
            for started in servers:
                started.__exit__(None, None, None)


def test_nginx_balances_over_the_compose_replicas_and_says_what_the_client_reached() -> None:
    conf = (DEPLOY / "nginx.conf").read_text()
    upstreams = set(re.findall(r"server (\S+):(\d+);", conf))
    assert upstreams == {(name, "9999") for name in agents()}
    for header in ("X-Forwarded-Host", "X-Forwarded-Proto", "X-Forwarded-For"):
        assert f"proxy_set_header {header}" in conf
    assert "proxy_buffering off;" in conf  # server-sent events go out as they happen
    nginx = compose()["services"]["nginx"]
    assert "./nginx.conf:/etc/nginx/conf.d/default.conf:ro" in nginx["volumes"]


# --- systemd ----------------------------------------------------------------------------------


def unit() -> dict[str, str]:
    found: dict[str, str] = {}
    for line in (DEPLOY / "a2a-sansio.service").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            found[key.strip()] = value.strip()
    return found


def environment_file(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition("=")
            found[key] = value
    return found


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
def test_systemd_finds_nothing_wrong_with_the_unit(tmp_path: Path) -> None:
    # The unit as installed, its paths pointing at this checkout and its environment.
    text = (DEPLOY / "a2a-sansio.service").read_text()
    text = text.replace("/opt/a2a-sansio/.venv/bin/a2a-sansio", str(CLI))
    text = text.replace("/opt/a2a-sansio", str(ROOT))
    text = text.replace("/etc/a2a-sansio.env", str(DEPLOY / "a2a-sansio.env"))
    installed = tmp_path / "a2a-sansio.service"
    installed.write_text(text)
    verified = subprocess.run(
        [shutil.which("systemd-analyze") or "systemd-analyze", "verify", str(installed)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout + verified.stderr == ""


def test_the_unit_serves_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    service = unit()
    assert service["ExecStart"] == "/opt/a2a-sansio/.venv/bin/a2a-sansio serve"
    assert service["KillSignal"] == "SIGTERM"
    env = environment_file(DEPLOY / "a2a-sansio.env")
    assert set(env) <= known_variables()
    assert env["A2A_STORE"].startswith(f"sqlite:/var/lib/{service['StateDirectory']}/")
    port = free_port()
    env["A2A_STORE"] = env["A2A_STORE"].replace(
        f"/var/lib/{service['StateDirectory']}", str(tmp_path)
    )
    env["A2A_PORT"] = str(port)
    with serving(env, port) as server:
        task = send(f"http://127.0.0.1:{port}", "hello")
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        server.send_signal(signal.SIGTERM)
        assert server.wait(float(service["TimeoutStopSec"])) == 0
    assert (tmp_path / "tasks.db").exists()
