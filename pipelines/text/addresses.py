"""Which internet addresses are public: the one rule for fetching a page and for citing an address."""

from __future__ import annotations

import ipaddress

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def public_only(address: Address) -> str | None:
    """Why an address must not be fetched (None: it is a public address)."""
    if isinstance(address, ipaddress.IPv6Address):
        why = _embedded_ipv4_refusal(address)
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
    if not address.is_global:
        return "not a public internet address"
    return None


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
    if address in _SITE_LOCAL:
        return "a site-local address (fec0::/10, a private network)"
    return None


_SITE_LOCAL = ipaddress.ip_network("fec0::/10")
