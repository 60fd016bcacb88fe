"""What the hostile tables share: tokens forged byte by byte, raw gRPC calls, and the check that
a server said nothing alarming in its log while it refused them."""

import base64
import hashlib
import hmac
import json
import os
import socket
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import grpc
import h2.config
import h2.connection
import h2.events
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


def h2_call(
    target: str, path: str, body: bytes, headers: Sequence[tuple[str, str]] = ()
) -> tuple[dict[str, str], dict[str, str]]:
    """One request over HTTP/2 (h2c, prior knowledge) with a body exactly as given (a gRPC
    client only sends well-formed frames): the response's head and its trailers (both empty
    when the server reset the stream). Bodies up to 64 KiB (one flow-control window)."""
    host, port = target.rsplit(":", 1)
    connection = h2.connection.H2Connection(
        h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
    )
    head: dict[str, str] = {}
    trailers: dict[str, str] = {}
    with socket.create_connection((host, int(port)), timeout=DEADLINE) as sock:
        connection.initiate_connection()
        stream = connection.get_next_available_stream_id()
        request = [
            (":method", "POST"),
            (":scheme", "http"),
            (":authority", target),
            (":path", path),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
            *GRPC_V1,
            *headers,
        ]
        connection.send_headers(stream, request)
        size = connection.max_outbound_frame_size
        for start in range(0, len(body), size):
            connection.send_data(stream, body[start : start + size])
        connection.end_stream(stream)
        sock.sendall(connection.data_to_send())
        ended = False
        while not ended:
            received = sock.recv(65536)
            if not received:
                break
            for event in connection.receive_data(received):
                if isinstance(event, h2.events.ResponseReceived):
                    head = {str(k): str(v) for k, v in event.headers}
                elif isinstance(event, h2.events.TrailersReceived):
                    trailers = {str(k): str(v) for k, v in event.headers}
                elif isinstance(event, h2.events.DataReceived):
                    connection.acknowledge_received_data(event.flow_controlled_length, stream)
                elif isinstance(
                    event,
                    h2.events.StreamEnded | h2.events.StreamReset | h2.events.ConnectionTerminated,
                ):
                    ended = True
            sock.sendall(connection.data_to_send())
    return head, trailers


def grpc_status(head: Mapping[str, str], trailers: Mapping[str, str]) -> str:
    """The ``grpc-status`` of a response (in its trailers, or its head when trailers-only)."""
    return trailers.get("grpc-status", head.get("grpc-status", ""))


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
