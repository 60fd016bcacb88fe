"""What a request is to the core: header names compared in lower case, however they came."""

from a2a_core.transport import HttpRequest


def test_header_names_are_lower_cased_once_when_the_request_is_made() -> None:
    request = HttpRequest("POST", "/", {"Content-Type": "application/json", "A2A-Version": "1.0"})
    assert request.headers == {"content-type": "application/json", "a2a-version": "1.0"}
    assert request.headers.get("content-type") == "application/json"


def test_lower_case_headers_are_kept_as_given() -> None:
    """(The adapters give lower-case names, as HTTP/2 and ASGI do: nothing is copied then.)"""
    headers = {"content-type": "application/json"}
    assert HttpRequest("POST", "/", headers).headers is headers
