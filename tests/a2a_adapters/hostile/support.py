"""What the hostile tables share: tokens forged byte by byte, raw gRPC calls, and the check that
a server said nothing alarming in its log while it refused them."""

import base64
import hashlib
import hmac
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import grpc
import httpx
import pytest
from jwt.algorithms import get_default_algorithms

from tests.a2a_adapters.support import HTTP_TIMEOUT, endpoint

#: How many generated cases a table's generated part draws (``make fuzz`` sets more).
EXAMPLES = max(int(os.environ.get("A2A_FUZZ_EXAMPLES", "150")) // 6, 10)
V1 = {"a2a-version": "1.0"}
GRPC_V1 = (("a2a-version", "1.0"),)
#: Seconds any one gRPC call may take.
DEADLINE = 10.0
SERVICE = "/lf.a2a.v1.A2AService/"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def part(value: Any) -> bytes:
    """A token segment's bytes: a value as JSON (NaN and Infinity as Python writes them), or
    bytes as they are."""
    return value if isinstance(value, bytes) else json.dumps(value).encode()


def forge(
    header: Any,
    payload: Any,
    *,
    key: Any = None,
    sign_as: str | None = None,
    signature: bytes = b"",
) -> str:
    """A compact JWS of ``header`` and ``payload`` (values or raw bytes), signed with ``key``
    by algorithm ``sign_as`` (whatever the header says), else carrying ``signature``."""
    signing_input = f"{b64(part(header))}.{b64(part(payload))}"
    if isinstance(key, bytes):  # an HMAC secret, whatever it holds (PyJWT refuses a PEM)
        assert sign_as == "HS256"
        signature = hmac.new(key, signing_input.encode(), hashlib.sha256).digest()
    elif key is not None:
        assert sign_as is not None
        algorithm = get_default_algorithms()[sign_as]
        signature = algorithm.sign(signing_input.encode(), algorithm.prepare_key(key))
    return f"{signing_input}.{b64(signature)}"


def post(url: str, path: str, body: Any, headers: Mapping[str, str]) -> httpx.Response:
    return httpx.post(
        url.rstrip("/") + path if path != "/" else endpoint(url),
        json=body,
        headers={**V1, **headers},
        timeout=HTTP_TIMEOUT,
    )


def grpc_call(
    target: str,
    method: str,
    payload: bytes,
    metadata: Sequence[tuple[str, str]] = GRPC_V1,
) -> grpc.RpcError | bytes:
    """One unary call with the request message as raw bytes: its response's bytes, or the
    error it was answered with."""
    with grpc.insecure_channel(target) as channel:
        call = channel.unary_unary(SERVICE + method)
        try:
            answer: bytes = call(payload, metadata=tuple(metadata), timeout=DEADLINE)
        except grpc.RpcError as error:
            return error
        return answer


def code_of(answer: grpc.RpcError | bytes) -> grpc.StatusCode:
    assert isinstance(answer, grpc.RpcError), f"the call succeeded: {answer!r}"
    code: grpc.StatusCode = answer.code()
    return code


@contextmanager
def quiet_log(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Fail if anything in the block was logged at ERROR or with a traceback: a refusal of bad
    input is an answer to its client, not a fault of the server's (and an attacker must not
    be able to fill the log)."""
    caplog.clear()
    yield
    alarming = [
        f"{r.name}: {r.getMessage()}"
        for r in caplog.records
        if r.levelno >= 40 or r.exc_info is not None
    ]
    assert not alarming, alarming
