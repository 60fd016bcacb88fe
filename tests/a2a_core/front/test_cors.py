"""CORS decisions: which origins are allowed, what a preflight is answered, what headers an
answer gets; and the origins a configuration may name."""

import pytest

from a2a_core import Core, CoreConfig
from tests.a2a_core.support import CARD

APP = "https://app.example"


def core(*origins: str) -> Core:
    return Core(CoreConfig(card=CARD, cors_origins=origins))


PREFLIGHT = {
    "origin": APP,
    "access-control-request-method": "POST",
    "access-control-request-headers": "content-type, a2a-version, x-custom",
}


def test_a_preflight_from_an_allowed_origin_is_answered() -> None:
    answer = core(APP).cors_preflight("OPTIONS", PREFLIGHT)
    assert answer is not None
    assert answer.status == 204
    headers = dict(answer.headers)
    assert headers["access-control-allow-origin"] == APP
    assert "POST" in headers["access-control-allow-methods"]
    assert headers["access-control-allow-headers"] == "content-type, a2a-version, x-custom"
    assert headers["vary"] == "origin"


def test_a_preflight_from_another_origin_is_refused() -> None:
    answer = core(APP).cors_preflight("OPTIONS", {**PREFLIGHT, "origin": "https://evil.example"})
    assert answer is not None
    assert answer.status == 403
    assert not any(name.startswith("access-control") for name, _ in answer.headers)


@pytest.mark.parametrize(
    ("method", "headers", "origins"),
    [
        ("OPTIONS", PREFLIGHT, ()),  # CORS off
        ("POST", PREFLIGHT, (APP,)),  # not OPTIONS
        ("OPTIONS", {"origin": APP}, (APP,)),  # a plain OPTIONS, no preflight
        ("OPTIONS", {"access-control-request-method": "POST"}, (APP,)),  # no origin
    ],
)
def test_what_is_not_a_preflight_goes_on(
    method: str, headers: dict[str, str], origins: tuple[str, ...]
) -> None:
    assert core(*origins).cors_preflight(method, headers) is None


def test_any_origin_and_no_requested_headers() -> None:
    answer = core("*").cors_preflight(
        "OPTIONS", {**PREFLIGHT, "access-control-request-headers": ""}
    )
    assert answer is not None
    headers = dict(answer.headers)
    assert headers["access-control-allow-origin"] == "*"
    assert "authorization" in headers["access-control-allow-headers"]
    assert "vary" not in headers


def test_answers_to_allowed_origins_say_so() -> None:
    allowed = dict(core("HTTPS://App.Example").cors_headers({"origin": APP}))
    assert allowed["access-control-allow-origin"] == APP
    assert "retry-after" in allowed["access-control-expose-headers"]
    assert dict(core("*").cors_headers({"origin": APP}))["access-control-allow-origin"] == "*"
    assert core(APP).cors_headers({"origin": "https://evil.example"}) == ()
    assert core(APP).cors_headers({}) == ()
    assert core().cors_headers({"origin": APP}) == ()


@pytest.mark.parametrize(
    ("origins", "error", "says"),
    [
        ("https://app.example", TypeError, "a collection of origins"),
        (["app.example"], ValueError, "an origin is http:// or https://"),
        (["ftp://app.example"], ValueError, "an origin is http:// or https://"),
        (["https://"], ValueError, "an origin is http:// or https://"),
        (["https://app.example/path"], ValueError, "no path"),
        ([1], ValueError, "it is not a string"),
    ],
)
def test_origins_are_checked(origins: object, error: type[Exception], says: str) -> None:
    with pytest.raises(error, match=says):
        CoreConfig(card=CARD, cors_origins=origins)  # type: ignore[arg-type]
