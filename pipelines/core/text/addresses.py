"""Which internet addresses are public: the one rule for fetching a page and for citing an address."""

from __future__ import annotations

import ipaddress
import re
import socket

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def public_only(address: Address) -> str | None:
    """Why an address must not be fetched (None: it is a public address)."""
    if isinstance(address, ipaddress.IPv6Address) and not (address.is_loopback or address.is_unspecified):
        why = _embedded_ipv4_refusal(address)  # ::1 and :: are themselves, not IPv4-compatible forms of 0.0.0.1 and 0.0.0.0
        if why is not None:
            return why
    for test, why in (
        ("is_unspecified", "an unspecified address"),
        ("is_loopback", "a loopback address (this machine)"),
        ("is_link_local", "a link-local address"),
        ("is_multicast", "a multicast address"),
        ("is_reserved", "a reserved address"),
        ("is_private", "a private network address"),
    ):
        if getattr(address, test):
            return why
    for network, why in _NOT_GLOBAL:
        if address in network:
            return why
    if not address.is_global:
        return "not a public internet address"
    return None


# Ranges set aside after this Python's table was written, which it still calls global (RFC 9637, 9602, 8215).
_NOT_GLOBAL: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = (
    (ipaddress.ip_network("3fff::/20"), "a documentation address (3fff::/20)"),
    (ipaddress.ip_network("5f00::/16"), "a segment-routing address (5f00::/16), not routed on the internet"),
    (ipaddress.ip_network("64:ff9b:1::/48"), "a local-use NAT64 address (64:ff9b:1::/48, a private network)"),
)


def _embedded_ipv4_refusal(address: ipaddress.IPv6Address) -> str | None:
    """IPv6 forms that carry an IPv4 address (mapped, 6to4, Teredo) are judged by that address; site-local is refused."""
    if address.ipv4_mapped is not None:
        return public_only(address.ipv4_mapped)
    if address.sixtofour is not None:  # 2002::/16: a 6to4 relay would deliver to the embedded IPv4 address
        why = public_only(address.sixtofour)
        return None if why is None else f"a 6to4 address embedding {address.sixtofour}, {why}"
    if address.teredo is not None:  # 2001::/32: (Teredo server, client); either one being non-public is refused
        for embedded in address.teredo:
            why = public_only(embedded)
            if why is not None:
                return f"a Teredo address embedding {embedded}, {why}"
    for network in (_NAT64, _IPV4_COMPATIBLE):  # 64:ff9b::a.b.c.d reaches a.b.c.d through a NAT64 gateway; ::a.b.c.d is the old form
        if address in network and int(address) & 0xFFFFFFFF:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
            why = public_only(embedded)
            if why is not None:
                return f"an IPv6 address embedding {embedded}, {why}"
    if address in _SITE_LOCAL:
        return "a site-local address (fec0::/10, a private network)"
    return None


_SITE_LOCAL = ipaddress.ip_network("fec0::/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")

# Names that never leave a network: the machine itself, multicast DNS, and the suffixes set aside for private networks.
_LOCAL_NAMES = (
    "localhost",
    "localdomain",
    "local",
    "internal",
    "intranet",
    "lan",
    "home",
    "corp",
    "private",
    "home.arpa",
    "test",
    "invalid",
)
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")
# Wildcard DNS names answer with the address written inside them (nip.io, sslip.io, xip.io and their kind:
# 127.0.0.1.nip.io, app-10-0-0-1.sslip.io, 7f000001.nip.io), so such a name is judged by that address, whatever the
# service; and a few names are registered to answer with this machine's address.
_DOTTED_IPV4 = re.compile(r"(?:^|[.-])((?:\d{1,3}[.-]){3}\d{1,3})(?=$|[.-])")
_HEX_IPV4 = re.compile(r"(?:^|[.-])([0-9a-f]{8})(?=\.)")
_LOOPBACK_NAMES = ("localtest.me", "lvh.me", "vcap.me", "lacolhost.com", "localhost.direct")


def citable_host(host: str) -> str | None:
    """Why a URL's host must not be cited or linked (None: a public name or address), whatever its spelling.

    A browser or resolver reads ``127.1``, ``0177.0.0.1``, ``0x7f.1`` and ``2130706433`` as
    127.0.0.1 (the BSD ``inet_aton`` forms), ignores one trailing dot (``localhost.``) and maps
    full-width letters and digits to ASCII (IDNA): each is judged by what it means, not how it
    is written. A name with no dot is a name on someone's own network.
    """
    try:
        name = host.encode("idna").decode("ascii").lower() if not host.isascii() else host.lower()
    except UnicodeError:
        return "a host name that is not a valid internet name"
    name = name.removesuffix(".")
    if not name or ".." in name or name.startswith("."):
        return "an empty or malformed host name"
    try:
        literal = ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        literal = None
    if literal is None and _NUMERIC_LABEL.match(name.rsplit(".", 1)[-1]):
        try:  # the last label is a number: an address in one of the BSD forms, or nothing a browser would open
            literal = ipaddress.IPv4Address(socket.inet_aton(name))
        except OSError:
            return "a host that looks like an address but is not one"
    if literal is not None:
        return public_only(literal)
    if "." not in name:
        return "a host name without a dot (a name on a private network)"
    if any(name == suffix or name.endswith("." + suffix) for suffix in _LOCAL_NAMES):
        return "a host name for this machine or a private network"
    if any(name == suffix or name.endswith("." + suffix) for suffix in _LOOPBACK_NAMES):
        return "a host name registered to answer with this machine's address"
    return _embedded_address_refusal(name)


def _embedded_address_refusal(name: str) -> str | None:
    """A name that writes an address inside it (as wildcard DNS names do) is judged by that address."""
    found = [m.group(1).replace("-", ".") for m in _DOTTED_IPV4.finditer(name)]
    found += [str(ipaddress.IPv4Address(int(m.group(1), 16))) for m in _HEX_IPV4.finditer(name)]
    for text in found:
        try:
            embedded = ipaddress.IPv4Address(text)
        except ValueError:
            continue
        why = public_only(embedded)
        if why is not None:
            return f"a name that answers with the address written in it ({embedded}), {why}"
    return None
