"""The JSON-RPC 2.0 envelope: parsing a request body, and writing results and errors.

Only the envelope lives here; what ``params`` and ``result`` hold is the dialect codec's business.
Every failure carries the request id when it could be read, so the client can match the error to
its call, and ``null`` when it could not (a parse error), as JSON-RPC 2.0 requires.
"""

from typing import Any

import attrs

from a2a_core._errors import (
    A2AError,
    FieldViolation,
    InvalidParamsError,
    InvalidRequestError,
    ParseError,
    PayloadTooLargeError,
)
from a2a_core._json import (
    DEFAULT_LIMITS,
    BadValue,
    JsonLimits,
    NotJson,
    TooManyItems,
    dumps,
    loads,
    string_problem,
)

__all__ = ["RpcFailure", "RpcId", "RpcRequest", "error_body", "parse_request", "result_body"]

#: A JSON-RPC id: a string, a number or null, echoed back unchanged.
RpcId = str | int | float | None


@attrs.frozen
class RpcRequest:
    """A well-formed JSON-RPC 2.0 request."""

    id: RpcId
    method: str
    params: Any


class RpcFailure(Exception):
    """A request that failed before it reached its method; answer ``error`` to ``id``."""

    def __init__(self, id: RpcId, error: A2AError) -> None:
        self.id = id
        self.error = error
        super().__init__(error.message)


#: The types of a valid id beside null.
_ID_TYPES = (str, int, float)


def _valid_id(value: Any) -> bool:
    return value is None or (type(value) in _ID_TYPES)


def _id_of(document: Any) -> RpcId:
    if isinstance(document, dict):
        candidate = document.get("id")
        if _valid_id(candidate) and not (type(candidate) is str and string_problem(candidate)):
            return candidate
    return None


def peek_id(body: bytes, limits: JsonLimits = DEFAULT_LIMITS) -> RpcId:
    """The request's id if the body is a JSON object with a valid one, else ``None``."""
    try:
        return _id_of(loads(body, limits))
    except BadValue as bad:
        return _id_of(bad.document)
    except ValueError:
        return None


def parse_request(body: bytes, limits: JsonLimits = DEFAULT_LIMITS) -> RpcRequest:
    """Parse and check the envelope, within the JSON limits (see ``_json``).

    Raises :class:`RpcFailure`: -32700 for what is not JSON, -32600 for a body over the item
    limit (before parsing) or a bad envelope, -32602 for a bad value inside ``params`` (too
    deep, a lone surrogate), named by its path.
    """
    try:
        document = loads(body, limits)
    except NotJson as error:
        raise RpcFailure(None, ParseError(f"Invalid JSON payload: {error}")) from None
    except TooManyItems as error:
        raise RpcFailure(None, PayloadTooLargeError(f"Request too large: {error}")) from None
    except BadValue as bad:
        raise RpcFailure(_id_of(bad.document), _bad_value_error(bad)) from None
    # (The parser makes exactly dicts and lists, so ``type`` tells them; members are read with
    # ``in`` and subscripts: every request passes here, and ``get`` would be a call each.)
    if type(document) is list:
        raise RpcFailure(None, InvalidRequestError("Batch requests are not supported"))
    if type(document) is not dict:
        raise RpcFailure(None, InvalidRequestError("A JSON-RPC request must be a JSON object"))
    request_id = document["id"] if "id" in document else None  # noqa: SIM401
    if request_id is not None and type(request_id) not in _ID_TYPES:
        raise RpcFailure(None, InvalidRequestError("id must be a string, a number or null"))
    if "jsonrpc" not in document or document["jsonrpc"] != "2.0":
        raise RpcFailure(request_id, InvalidRequestError('jsonrpc must be exactly "2.0"'))
    # A request without an id (a notification) is still answered, with id null: every A2A
    # method has a result, and a silent server would leave the client guessing.
    method = document["method"] if "method" in document else None  # noqa: SIM401
    if type(method) is not str or not method:
        raise RpcFailure(request_id, InvalidRequestError("method must be a non-empty string"))
    params = document["params"] if "params" in document else {}  # noqa: SIM401
    return RpcRequest(request_id, method, params)


def _bad_value_error(bad: BadValue) -> A2AError:
    """-32602 naming the field when it is a parameter, -32600 when it is the envelope."""
    if bad.path == "params" or bad.path.startswith(("params.", "params[")):
        return InvalidParamsError(
            f"Invalid parameters: {bad.path}: {bad.problem}",
            violations=(FieldViolation(bad.path, bad.problem),),
        )
    return InvalidRequestError(f"Invalid request: {bad}")


def result_body(request_id: RpcId, result: Any) -> bytes:
    """A success response."""
    return dumps({"jsonrpc": "2.0", "id": request_id, "result": result})


def error_body(request_id: RpcId, error: A2AError, data: Any) -> bytes:
    """An error response; ``data`` is the dialect's rendering of the error's details."""
    body: dict[str, Any] = {"code": error.codes.jsonrpc, "message": error.message}
    if data is not None:
        body["data"] = data
    return dumps({"jsonrpc": "2.0", "id": request_id, "error": body})
