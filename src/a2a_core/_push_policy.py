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

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_LOCAL_NAMES = ("localhost", "localhost.localdomain")


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, 6to4, NAT64), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_allowed(address: str | IPAddress) -> bool:
    """Whether the guard lets a webhook connect to ``address``.

    Only globally routable unicast addresses pass: loopback, private, link-local, unique-local,
    CGNAT, multicast, unspecified and reserved ranges do not, nor IPv6 forms that embed them.
    """
    try:
        ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None and not address_allowed(embedded):
            return False
    return ip.is_global and not ip.is_multicast


def _host_allowed(host: str, allow_hosts: Collection[str]) -> bool:
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
    if _host_allowed(host, allow_hosts):
        return None
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        name = host.lower().rstrip(".")
        if name in _LOCAL_NAMES or name.endswith(".localhost"):
            return f"{host} is a local address, which push notifications may not reach"
        return None  # a name: its addresses are checked when it is resolved for delivery
    if not address_allowed(ip):
        return f"{host} is not a public address, which push notifications may not reach"
    return None


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
