"""Which web domains a run may take evidence from: allow and deny lists, and named presets.

A rule is a domain or a domain suffix: ``nih.gov`` matches ``nih.gov`` and every subdomain
(``www.ncbi.nlm.nih.gov``); ``gov`` (or ``.gov``) matches every ``.gov`` site. A denied
domain always loses; with an allow list, only the domains on it get through.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlparse

from pipelines.core.errors import DebateDeskError

_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_DOMAIN = re.compile(rf"^{_LABEL}(?:\.{_LABEL})*$")

# Named policies a desk picks per run; "custom" lists add to any of them.
PRESETS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "open": ((), ()),
    "health": (
        (
            "gov",
            "edu",
            "who.int",
            "europa.eu",
            "nhs.uk",
            "nih.gov",
            "nature.com",
            "science.org",
            "thelancet.com",
            "nejm.org",
            "bmj.com",
            "jamanetwork.com",
            "cell.com",
            "plos.org",
            "sciencedirect.com",
            "springer.com",
            "wiley.com",
            "oup.com",
            "cochranelibrary.com",
            "medrxiv.org",
            "biorxiv.org",
            "frontiersin.org",
            "mdpi.com",
            "acpjournals.org",
            "ahajournals.org",
            "doi.org",
        ),
        (),
    ),
}


class SourcePolicyError(DebateDeskError, ValueError):
    """A domain rule that cannot be used; the message names it and shows the expected form."""


def normalize_domain(rule: str) -> str:
    """``.GOV`` -> ``gov``, ``*.nih.gov`` -> ``nih.gov``; anything else than a domain is refused."""
    cleaned = rule.strip().lower().removeprefix("*.").removeprefix(".").rstrip(".")
    if not cleaned:
        raise SourcePolicyError(f"empty domain in {rule!r}: write domains like nih.gov or .edu, separated by commas")
    if "://" in cleaned or "/" in cleaned or ":" in cleaned or "@" in cleaned:
        host = urlparse(cleaned if "://" in cleaned else f"//{cleaned}").hostname or "the domain"
        raise SourcePolicyError(f"{rule!r} is not a domain: write only the domain, e.g. {host}")
    try:
        cleaned = cleaned.encode("idna").decode("ascii")  # internationalized names as the DNS spells them
    except UnicodeError as exc:
        raise SourcePolicyError(f"{rule!r} is not a valid domain name ({exc})") from None
    if not _DOMAIN.match(cleaned):
        raise SourcePolicyError(
            f"{rule!r} is not a valid domain: use letters, digits and hyphens between dots, e.g. nih.gov, who.int or .edu"
        )
    return cleaned


def parse_domains(value: str | Iterable[str]) -> list[str]:
    """Domains from a comma-, space- or newline-separated text (or a list), normalized, in order, without repeats."""
    items = re.split(r"[\s,;]+", value) if isinstance(value, str) else [str(v) for v in value]
    found: list[str] = []
    for item in items:
        if not item.strip():
            continue
        domain = normalize_domain(item)
        if domain not in found:
            found.append(domain)
    return found


def host_of(url: str) -> str:
    """The lowercase host of a URL ('' when it has none)."""
    try:
        return (urlparse(url).hostname or "").lower().rstrip(".")
    except ValueError:
        return ""


def matches(host: str, rule: str) -> bool:
    """A host matches a rule when it is that domain or a subdomain of it (label by label, never a substring)."""
    return host == rule or host.endswith("." + rule)


@dataclass(frozen=True)
class SourcePolicy:
    """Allow and deny lists of domains; empty lists mean every site is allowed."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    name: str = "open"

    @classmethod
    def build(cls, preset: str = "open", allow: Iterable[str] = (), deny: Iterable[str] = ()) -> SourcePolicy:
        """The preset's lists with the extra ``allow`` and ``deny`` domains added (validated)."""
        if preset not in PRESETS:
            raise SourcePolicyError(f"unknown source policy {preset!r}; choose one of: {', '.join(PRESETS)}")
        base_allow, base_deny = PRESETS[preset]
        return cls(
            allow=tuple(parse_domains([*base_allow, *allow])),
            deny=tuple(parse_domains([*base_deny, *deny])),
            name=preset,
        )

    @property
    def restricts(self) -> bool:
        return bool(self.allow or self.deny)

    def verdict(self, url: str) -> str | None:
        """Why ``url`` is refused (``None`` when it is allowed)."""
        host = host_of(url)
        if not host:
            return "no domain in the link"
        for rule in self.deny:
            if matches(host, rule):
                return f"{host} is on the deny list ({rule})"
        if self.allow and not any(matches(host, rule) for rule in self.allow):
            return f"{host} is not on the allow list"
        return None

    def allows(self, url: str) -> bool:
        return self.verdict(url) is None

    def describe(self) -> str:
        parts = []
        if self.allow:
            parts.append("only " + ", ".join(self.allow))
        if self.deny:
            parts.append("never " + ", ".join(self.deny))
        return "; ".join(parts) or "any site"
