"""Where push notifications may go: the SSRF guard's rules, as pure functions.

A webhook URL is chosen by the client, and the server will POST to it from inside its network:
without a guard, any client could make the server reach its metadata service
(169.254.169.254), its admin ports on loopback, or hosts on the private network (spec §13.2).
The guard is on by default and has two halves:

* :func:`url_problem` checks a URL when a config is created (scheme, an IP literal's range,
  ``localhost`` names), so that a bad URL is refused with a clear error at once;
* :func:`address_allowed` checks every address a host name resolves to, at delivery time. The
  adapter connects to the very address it checked, so a name that resolves to a public address
  when checked and to loopback a moment later (DNS rebinding) gains nothing.

An explicit allow-list of hosts is the only way around it (tests use it to reach a receiver on
127.0.0.1).
"""

import ipaddress
from collections.abc import Collection
from urllib.parse import urlsplit

__all__ = ["address_allowed", "url_problem"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_LOCAL_NAMES = ("localhost", "localhost.localdomain")

_net = ipaddress.IPv6Network

#: IPv6 forms whose last 32 bits are an IPv4 address that a packet sent to them reaches, through
#: the host's own stack or a translator. Such an address is exactly as public as its IPv4 one.
_LAST_32_BITS = (
    _net("::/96"),  # IPv4-compatible (RFC 4291 §2.5.5.1, deprecated); :: and ::1 fall in too
    _net("::ffff:0:0/96"),  # IPv4-mapped
    _net("::ffff:0:0:0/96"),  # IPv4-translated (RFC 2765 SIIT)
    _net("64:ff9b::/96"),  # NAT64, the well-known prefix (RFC 6052)
    _net("64:ff9b:1::/96"),  # NAT64, the local-use prefix used as a /96 (RFC 8215)
)
#: NAT64's local-use prefix (RFC 8215): the operator picks a /48, /56, /64 or /96 inside it, and
#: nothing in an address says which, so every RFC 6052 layout that fits is taken to be meant.
_NAT64_LOCAL = _net("64:ff9b:1::/48")
_SIXTOFOUR = _net("2002::/16")  # RFC 3056: the IPv4 address in bits 16..47
_TEREDO = _net("2001::/32")  # RFC 4380: server in bits 32..63, client XORed in the last 32
#: The forms that are nothing but a way to reach their embedded IPv4 address, and so pass
#: exactly when it does (Teredo and ISATAP addresses are IPv6 hosts too, and must pass as such).
_TRANSLATIONS = (*_LAST_32_BITS, _NAT64_LOCAL, _SIXTOFOUR)
#: Everything IANA hands out as global unicast; outside it, only the translations may pass.
_GLOBAL_UNICAST = _net("2000::/3")


def _bits(value: int, start: int, length: int) -> int:
    """``length`` bits of a 128-bit ``value``, counted from its most significant bit."""
    return (value >> (128 - start - length)) & ((1 << length) - 1)


def _rfc6052(value: int, prefix_length: int) -> ipaddress.IPv4Address | None:
    """The IPv4 address in an IPv4-embedded IPv6 address with a /48, /56 or /64 prefix
    (RFC 6052 §2.2): the 32 bits sit after the prefix, skipping bits 64..71 (the "u" octet,
    which must be zero, so an address where it is not has no such reading)."""
    if _bits(value, 64, 8):
        return None
    before = 64 - prefix_length  # bits of the IPv4 address ahead of the u octet
    high = _bits(value, prefix_length, before)
    low = _bits(value, 72, 32 - before)
    return ipaddress.IPv4Address(high << (32 - before) | low)


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """Every IPv4 address that ``address`` may stand for, by any IPv6 form that embeds one."""
    value = int(address)
    found: list[ipaddress.IPv4Address] = []
    if any(address in network for network in _LAST_32_BITS):
        found.append(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    elif address in _NAT64_LOCAL:
        found.append(ipaddress.IPv4Address(value & 0xFFFFFFFF))  # a /96 prefix elsewhere in it
        found.extend(v4 for n in (48, 56, 64) if (v4 := _rfc6052(value, n)) is not None)
    if address in _SIXTOFOUR:
        found.append(ipaddress.IPv4Address(_bits(value, 16, 32)))
    if address in _TEREDO:
        found.append(ipaddress.IPv4Address(_bits(value, 32, 32)))
        found.append(ipaddress.IPv4Address(_bits(value, 96, 32) ^ 0xFFFFFFFF))
    if _bits(value, 64, 32) & 0xFCFFFFFF == 0x00005EFE:
        # An ISATAP interface id (RFC 5214), whatever the prefix: a host on that ISATAP
        # link (this one, perhaps) reaches the address over IPv4, at the embedded address.
        found.append(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    return found


def _ipv4_allowed(ip: ipaddress.IPv4Address) -> bool:
    return ip.is_global and not ip.is_multicast


def address_allowed(address: str | IPAddress) -> bool:
    """Whether the guard lets a webhook connect to ``address``.

    Only globally routable unicast addresses pass: loopback, private, link-local, site-local,
    unique-local, CGNAT, multicast, unspecified and reserved ranges do not. An IPv6 address that
    embeds an IPv4 one (mapped, compatible, translated, NAT64, 6to4, Teredo, ISATAP) is judged
    by that address, so ``::127.0.0.1`` is loopback; where the embedded address cannot be told
    for sure (NAT64's local-use prefix), every reading must be public. The IPv6 ranges are this
    module's own rather than only :attr:`ipaddress.IPv6Address.is_global`, whose table differs
    between Python versions and, on some, calls ``::127.0.0.1`` global.
    """
    try:
        ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv4Address):
        return _ipv4_allowed(ip)
    embedded = _embedded_ipv4(ip)
    if not all(_ipv4_allowed(v4) for v4 in embedded):
        return False
    if any(ip in network for network in _TRANSLATIONS):
        return True
    return ip in _GLOBAL_UNICAST and ip.is_global


def host_allowed(host: str, allow_hosts: Collection[str]) -> bool:
    """Whether ``host`` is allow-listed: compared as DNS compares names (case aside, and a
    trailing dot aside). The one rule for both halves of the guard: a URL allowed when its
    config is created is delivered unguarded, and only such a URL."""
    return host.lower().rstrip(".") in {h.lower().rstrip(".") for h in allow_hosts}


def url_problem(url: str, allow_hosts: Collection[str] = ()) -> str | None:
    """What is wrong with ``url`` as a webhook, or ``None`` if it may be used (so far as can
    be told without resolving its host)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        return f"not a valid URL ({error})"
    del port  # parsed only to validate it
    if parts.scheme not in ("http", "https"):
        return "only http and https URLs can receive push notifications"
    host = parts.hostname
    if not host:
        return "the URL has no host"
    if parts.username or parts.password:
        return "credentials belong in the config's authentication, not in the URL"
    if host_allowed(host, allow_hosts):
        return None
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        name = host.lower().rstrip(".")
        if name in _LOCAL_NAMES or name.endswith(".localhost"):
            return (
                f"{host} is a local address, which push notifications may not reach "
                f"{_ALLOWING.format(host=host)}"
            )
        return None  # a name: its addresses are checked when it is resolved for delivery
    if not address_allowed(ip):
        return (
            f"{host} is not a public address, which push notifications may not reach "
            f"{_ALLOWING.format(host=host)}"
        )
    return None


#: How the server's operator lets webhooks reach a host the guard refuses (said to the client,
#: who may be that operator, testing: a webhook on 127.0.0.1 is the usual first try).
_ALLOWING = (
    "unless the server allows it: --push-allow-host {host} on the command line, "
    "push_allow_hosts in serve() and CoreConfig"
)


def host_of(url: str) -> str:
    """The host of a URL that :func:`url_problem` accepted."""
    return urlsplit(url).hostname or ""


#: The characters of an HTTP token (RFC 9110 §5.6.2): what an auth scheme is written in.
_TOKEN_CHARS = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)


def header_value_problem(value: str) -> str | None:
    """Why ``value`` cannot be sent as an HTTP header value, or ``None``.

    The push sender puts a config's token and credentials into request headers. A value that
    HTTP cannot carry (non-ASCII, CR or LF, other control characters) would only fail when a
    notification is sent, long after the client that gave it has gone; so it is refused when
    the config is created. Only visible ASCII and inner spaces pass: header values with
    ``obs-text`` or surrounding whitespace are legal on the wire in theory but refused or
    altered by common HTTP clients.
    """
    for index, char in enumerate(value):
        if not " " <= char <= "~":
            return (
                f"must be printable ASCII to be sent as an HTTP header; character {index} is "
                f"U+{ord(char):04X}"
            )
    if value != value.strip(" "):
        return "must not begin or end with a space (it is sent as an HTTP header value)"
    return None


def auth_scheme_problem(scheme: str) -> str | None:
    """Why ``scheme`` is not an HTTP authentication scheme (a token), or ``None``."""
    if not scheme.strip():
        return "must not be empty"
    bad = next((char for char in scheme if char not in _TOKEN_CHARS), None)
    if bad is not None:
        return (
            f"must be an HTTP authentication scheme such as Bearer or Basic (letters, digits "
            f"and !#$%&'*+-.^_`|~); it holds U+{ord(bad):04X}"
        )
    return None


def url_text_problem(url: str) -> str | None:
    """Why ``url`` cannot be sent as a request target as written, or ``None``."""
    for index, char in enumerate(url):
        if not "!" <= char <= "~":
            return (
                f"must be written in printable ASCII without spaces (percent-encode other "
                f"characters, write international host names in their xn-- form); "
                f"character {index} is U+{ord(char):04X}"
            )
    return None


#: What an id keeps as it is in a header value: visible ASCII, less ``%`` (the escape) and ``/``
#: (which separates the parts of ``X-A2A-Notification-Id``).
_ID_KEPT = frozenset(chr(n) for n in range(0x21, 0x7F)) - {"%", "/"}


def header_id(value: str) -> str:
    """``value`` (a task or push config id, which a client may choose) as it can travel in a
    header: every other character percent-encoded as its UTF-8 bytes (``é`` is ``%C3%A9``).
    Ids are accepted as the protocol allows, any string; what HTTP cannot carry is encoded
    rather than refused, so that every notification of an accepted config can be sent. Ids of
    visible ASCII alone, such as the server's UUIDs, are unchanged."""
    if all(char in _ID_KEPT for char in value):
        return value
    return "".join(
        char if char in _ID_KEPT else "".join(f"%{byte:02X}" for byte in _utf8(char))
        for char in value
    )


def _utf8(char: str) -> bytes:
    # A lone surrogate never gets this far (decoding refuses it), but an encoder must not raise.
    return char.encode("utf-8", "surrogatepass")
