"""The SSRF guard's rules: which webhook URLs and addresses push notifications may reach."""

import ipaddress
from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_core.decide._push_policy import auth_scheme_problem, header_id, header_value_problem
from a2a_core.transport import address_allowed, url_problem

REFUSED_ADDRESSES = [
    "127.0.0.1",  # loopback
    "127.8.9.10",
    "10.0.0.1",  # private
    "172.16.0.1",
    "172.31.255.254",
    "192.168.1.1",
    "169.254.169.254",  # link-local: cloud metadata
    "100.64.0.1",  # CGNAT
    "0.0.0.0",  # noqa: S104  unspecified: refused, not bound
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
    "::127.0.0.1",  # IPv4-compatible loopback
    "::169.254.169.254",
    "::ffff:0:127.0.0.1",  # IPv4-translated
    "::ffff:0:a00:1",
    "64:ff9b:1::7f00:1",  # NAT64 local-use, /96 form
    "64:ff9b:1::a9fe:a9fe",
    "64:ff9b:1:a9fe:a9:fe00::",  # local-use with a /48 prefix: 169.254.169.254
    "64:ff9b:1:ff00::808:808",  # a /96 reading is public, the /48 reading (255.0.8.8) is not
    "64:ff9b:2::1",  # next to NAT64, no embedding: reserved
    "fec0::1",  # site-local (deprecated)
    "feff:ffff::1",
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1 (XORed)
    "2001:470:1f0b::5efe:a00:1",  # ISATAP of 10.0.0.1
    "2001:470:1f0b::200:5efe:7f00:1",
    "fe80::200:5efe:808:808",  # ISATAP of a public address, but link-local
    "fec0::200:5efe:808:808",
    "2001:db8::1",  # documentation
    "100::1",  # discard-only
    "not an address",
]
ALLOWED_ADDRESSES = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "2606:4700:4700::1111",
    "::ffff:8.8.8.8",  # each IPv6 form of a public IPv4 address is as public as it is
    "::8.8.8.8",
    "::ffff:0:8.8.8.8",
    "64:ff9b::808:808",
    "64:ff9b:1::808:808",
    "2002:808:808::1",
    "2001:470:1f0b::200:5efe:808:808",
]


@pytest.mark.parametrize("address", REFUSED_ADDRESSES)
def test_non_public_addresses_are_refused(address: str) -> None:
    assert not address_allowed(address)


@pytest.mark.parametrize("address", ALLOWED_ADDRESSES)
def test_public_addresses_are_allowed(address: str) -> None:
    assert address_allowed(address)


#: Every IPv4 range the guard refuses, to draw embedded addresses from.
NON_PUBLIC_IPV4 = [
    ipaddress.IPv4Network(n)
    for n in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/29",
        "192.0.2.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "224.0.0.0/4",
        "240.0.0.0/4",
    )
]
#: Those addresses, as integers.
non_public_ipv4 = st.sampled_from(NON_PUBLIC_IPV4).flatmap(
    lambda n: st.integers(int(n.network_address), int(n.broadcast_address))
)


def v6(value: int) -> str:
    return str(ipaddress.IPv6Address(value))


def bits(n: int) -> st.SearchStrategy[int]:
    return st.integers(0, (1 << n) - 1)


def last_32(prefix: str) -> st.SearchStrategy[str]:
    """``prefix``::a.b.c.d for a /96 ``prefix``."""
    base = int(ipaddress.IPv6Address(prefix))
    return non_public_ipv4.map(lambda v4: v6(base | v4))


def nat64_local(prefix_length: int) -> st.SearchStrategy[str]:
    """An RFC 6052 address under 64:ff9b:1::/48 with a /48, /56 or /64 prefix: the IPv4 bits
    around the zero u octet (bits 64..71), anything in the prefix's own bits and the suffix."""

    def build(v4: int, extra: int, suffix: int) -> str:
        before = 64 - prefix_length
        high, low = v4 >> (32 - before), v4 & ((1 << (32 - before)) - 1)
        address = 0x0064_FF9B_0001 << 80
        address |= extra << 64 + before
        address |= high << 64
        address |= low << 128 - 72 - (32 - before)
        address |= suffix & ((1 << (128 - 72 - (32 - before))) - 1)
        return v6(address)

    # Inside 64:ff9b:1::/96 the /96 reading decides: the others are then 0.0.0.x, an address
    # no translator sends to.
    slash_96 = ipaddress.IPv6Network("64:ff9b:1::/96")
    built = st.builds(build, non_public_ipv4, bits(prefix_length - 48), bits(56))
    return built.filter(lambda address: ipaddress.IPv6Address(address) not in slash_96)


def sixtofour() -> st.SearchStrategy[str]:
    return st.builds(
        lambda v4, rest: v6(0x2002 << 112 | v4 << 80 | rest), non_public_ipv4, bits(80)
    )


def teredo() -> st.SearchStrategy[str]:
    def build(private: int, other: int, flags: int, client_is_private: bool) -> str:
        server, client = (other, private) if client_is_private else (private, other)
        return v6(0x2001_0000 << 96 | server << 64 | flags << 32 | client ^ 0xFFFFFFFF)

    return st.builds(build, non_public_ipv4, bits(32), bits(32), st.booleans())


def isatap() -> st.SearchStrategy[str]:
    prefixes = st.integers(0x2000 << 48, (0x4000 << 48) - 1)  # global unicast /64s

    def build(prefix: int, u_and_g: int, v4: int) -> str:
        return v6(prefix << 64 | (u_and_g << 24 | 0x5EFE) << 32 | v4)

    return st.builds(build, prefixes, st.sampled_from([0, 1, 2, 3]), non_public_ipv4)


EMBEDDINGS = {
    "compatible": last_32("::"),
    "mapped": last_32("::ffff:0:0"),
    "translated": last_32("::ffff:0:0:0"),
    "nat64": last_32("64:ff9b::"),
    "nat64 local /96": last_32("64:ff9b:1::"),
    "nat64 local /48": nat64_local(48),
    "nat64 local /56": nat64_local(56),
    "nat64 local /64": nat64_local(64),
    "6to4": sixtofour(),
    "teredo": teredo(),
    "isatap": isatap(),
}


@pytest.mark.parametrize("form", EMBEDDINGS)
@given(data=st.data())
def test_an_ipv6_address_that_embeds_a_non_public_ipv4_one_is_refused(
    form: str, data: st.DataObject
) -> None:
    address = data.draw(EMBEDDINGS[form])
    assert not address_allowed(address)
    assert url_problem(f"http://[{address}]/hook") is not None


@pytest.mark.parametrize("prefix", ["::", "::ffff:0:0", "::ffff:0:0:0", "64:ff9b::", "64:ff9b:1::"])
@given(address=bits(32))
def test_the_96_bit_forms_judge_like_their_ipv4(prefix: str, address: int) -> None:
    embedded = v6(int(ipaddress.IPv6Address(prefix)) | address)
    assert address_allowed(embedded) == address_allowed(str(ipaddress.IPv4Address(address)))


@given(st.ip_addresses(network="fec0::/10"))
def test_site_local_is_refused(address: object) -> None:
    assert not address_allowed(str(address))


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://127.0.0.1:8080/hook", "not a public address"),
        ("http://10.0.0.1/", "not a public address"),
        ("http://[::1]/hook", "not a public address"),
        ("http://169.254.169.254/latest/meta-data", "not a public address"),
        ("http://[::127.0.0.1]/", "not a public address"),
        ("http://[::169.254.169.254]/", "not a public address"),
        ("http://[fec0::1]/", "not a public address"),
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


@pytest.mark.parametrize(
    ("value", "sent"),
    [
        ("3f2b-9a1c", "3f2b-9a1c"),  # what the server makes, and most clients: unchanged
        ("é", "%C3%A9"),
        ("\ufeff", "%EF%BB%BF"),  # a byte-order mark
        ("\u202e", "%E2%80%AE"),  # right-to-left override
        ("\uffff", "%EF%BF%BF"),
        ("a b", "a%20b"),
        ("a/b", "a%2Fb"),  # the separator of the header's parts
        ("100%", "100%25"),  # the escape itself
        ("\r\n", "%0D%0A"),
        ("😀", "%F0%9F%98%80"),
    ],
)
def test_an_id_travels_in_a_header_percent_encoded(value: str, sent: str) -> None:
    assert header_id(value) == sent


@given(st.text())
def test_any_id_becomes_a_header_value_that_decodes_back(value: str) -> None:
    encoded = header_id(value)
    assert all("!" <= char <= "~" for char in encoded)  # visible ASCII: any client sends it
    assert "/" not in encoded
    assert unquote(encoded, errors="surrogatepass") == value


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/hook", "http://localhost/hook"])
def test_a_refused_webhook_says_which_setting_allows_it(url: str) -> None:
    host = url.split("//")[1].split(":")[0].split("/")[0]
    problem = url_problem(url)
    assert problem is not None
    assert f"--push-allow-host {host}" in problem
    assert "push_allow_hosts" in problem
    assert url_problem(url, [host]) is None


@pytest.mark.parametrize(
    ("address", "allowed"),
    [("64:ff9b:1:0:ff00::808:808", True), ("64:ff9b:1:0:ff00::7f00:1", False)],
)
def test_a_nat64_local_address_with_a_u_octet_has_only_its_last_32_bits_to_read(
    address: str, allowed: bool
) -> None:
    """RFC 6052 layouts with a /48, /56 or /64 prefix need bits 64..71 (the "u" octet) zero:
    where they are not, the address can only be a /96 prefix's, which its last 32 bits say."""
    assert address_allowed(address) is allowed


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("token", None),
        ("inner spaces pass", None),
        (" leading", "must not begin or end with a space (it is sent as an HTTP header value)"),
        ("trailing ", "must not begin or end with a space (it is sent as an HTTP header value)"),
        (
            "tab\there",
            "must be printable ASCII to be sent as an HTTP header; character 3 is U+0009",
        ),
        ("café", "must be printable ASCII to be sent as an HTTP header; character 3 is U+00E9"),
    ],
)
def test_header_values_are_visible_ascii_with_inner_spaces_only(
    value: str, problem: str | None
) -> None:
    assert header_value_problem(value) == problem


@pytest.mark.parametrize(
    ("scheme", "problem"),
    [
        ("Bearer", None),
        ("", "must not be empty"),
        ("   ", "must not be empty"),
        ("Be arer", "it holds U+0020"),
    ],
)
def test_auth_schemes_are_http_tokens(scheme: str, problem: str | None) -> None:
    found = auth_scheme_problem(scheme)
    assert (found is None) if problem is None else (found is not None and found.endswith(problem))
