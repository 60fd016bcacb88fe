"""The SSRF guard's rules: which webhook URLs and addresses push notifications may reach."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_core import address_allowed, url_problem

REFUSED_ADDRESSES = [
    "127.0.0.1",  # loopback
    "127.8.9.10",
    "10.0.0.1",  # private
    "172.16.0.1",
    "172.31.255.254",
    "192.168.1.1",
    "169.254.169.254",  # link-local: cloud metadata
    "100.64.0.1",  # CGNAT
    "0.0.0.0",  # unspecified
    "224.0.0.1",  # multicast
    "255.255.255.255",  # broadcast
    "240.0.0.1",  # reserved
    "::1",
    "::",
    "fe80::1",  # link-local
    "fc00::1",  # unique-local
    "fd12:3456::1",
    "ff02::1",  # multicast
    "::ffff:127.0.0.1",  # IPv4-mapped loopback
    "::ffff:10.1.2.3",
    "::ffff:169.254.169.254",
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "not an address",
]
ALLOWED_ADDRESSES = ["8.8.8.8", "1.1.1.1", "93.184.215.14", "2606:4700:4700::1111"]


@pytest.mark.parametrize("address", REFUSED_ADDRESSES)
def test_non_public_addresses_are_refused(address: str) -> None:
    assert not address_allowed(address)


@pytest.mark.parametrize("address", ALLOWED_ADDRESSES)
def test_public_addresses_are_allowed(address: str) -> None:
    assert address_allowed(address)


@given(st.ip_addresses(v=4))
def test_ipv4_mapped_forms_judge_like_their_ipv4(address: object) -> None:
    mapped = f"::ffff:{address}"
    if not address_allowed(str(address)):
        assert not address_allowed(mapped)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://127.0.0.1:8080/hook", "not a public address"),
        ("http://10.0.0.1/", "not a public address"),
        ("http://[::1]/hook", "not a public address"),
        ("http://169.254.169.254/latest/meta-data", "not a public address"),
        ("http://localhost:9000/", "local address"),
        ("http://api.localhost/", "local address"),
        ("ftp://example.com/", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("http:///nohost", "no host"),
        ("https://user:secret@example.com/", "credentials"),
        ("http://example.com:99999/", "not a valid URL"),
    ],
)
def test_bad_webhook_urls_are_explained(url: str, problem: str) -> None:
    found = url_problem(url)
    assert found is not None
    assert problem in found


@pytest.mark.parametrize(
    "url", ["https://example.com/hook", "http://8.8.8.8:8080/x", "https://[2606:4700::1]/"]
)
def test_public_webhook_urls_pass(url: str) -> None:
    assert url_problem(url) is None


def test_the_allow_list_is_the_way_around_the_guard() -> None:
    assert url_problem("http://127.0.0.1:8080/hook", ["127.0.0.1"]) is None
    assert url_problem("http://LOCALHOST/hook", ["localhost"]) is None
    assert url_problem("http://127.0.0.2/hook", ["127.0.0.1"]) is not None
