"""The web_fetch options schema and the domain allow and deny lists it configures.

A domain entry is a lowercase host name without scheme, port, path or trailing dot; it covers
that host and its subdomains on a dot boundary (``example.com`` covers ``docs.example.com`` and
never ``notexample.com``). Hosts and entries are compared in their ASCII (IDNA) form.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import idna
from marshmallow import Schema, ValidationError, fields, validate

_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_ASCII_HOST = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_MAX_HOST_CHARS = 253


def ascii_host(host: str) -> str | None:
    """Return ``host`` lowercased, without a trailing dot, in IDNA form; None when it cannot be."""
    host = host.strip().lower().rstrip(".")
    if not host:
        return None
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except idna.IDNAError:
            return None
    return host


def entry_problem(entry: str) -> str | None:
    """Return why ``entry`` is not a valid domain list entry, or None when it is."""
    ascii_form = ascii_host(entry)
    if entry != entry.strip().lower() or entry.endswith(".") or ascii_form is None:
        ascii_form = None
    elif len(ascii_form) > _MAX_HOST_CHARS or not _ASCII_HOST.fullmatch(ascii_form):
        ascii_form = None
    if ascii_form is not None:
        return None
    return (
        f"{entry!r} is not a domain name. Use a lowercase host name such as example.com, "
        "without a scheme, port, path or trailing dot."
    )


def _validate_domains(entries: list[str]) -> None:
    problems = [p for p in (entry_problem(e) for e in entries) if p]
    if problems:
        raise ValidationError(problems)


def _domain_list(title: str, description: str) -> fields.List:
    return fields.List(
        fields.String(),
        load_default=list,
        validate=_validate_domains,
        metadata={"title": title, "description": description},
    )


class WebFetchOptions(Schema):
    """The admin's options for web_fetch (all optional, with the spec's defaults)."""

    allowDomains = _domain_list(
        "Allowed domains",
        "When set, only these domains and their subdomains may be fetched.",
    )
    denyDomains = _domain_list(
        "Denied domains",
        "These domains and their subdomains are never fetched. Checked before the allow list.",
    )
    userToggle = fields.Boolean(
        load_default=True,
        metadata={
            "title": "Users can switch it off",
            "description": "Let each user turn web_fetch off in their settings.",
        },
    )
    maxCharacters = fields.Integer(
        load_default=20_000,
        validate=validate.Range(min=500, max=1_000_000),
        metadata={
            "title": "Characters per part",
            "description": "Longer pages come in parts of this many characters.",
        },
    )
    maxBytes = fields.Integer(
        load_default=5_000_000,
        validate=validate.Range(min=10_000, max=100_000_000),
        metadata={
            "title": "Page size limit (bytes)",
            "description": "Reading a page stops here; the rest is not downloaded.",
        },
    )
    maxFileBytes = fields.Integer(
        load_default=20_000_000,
        validate=validate.Range(min=10_000, max=500_000_000),
        metadata={
            "title": "File size limit (bytes)",
            "description": "Larger files, such as PDFs, are refused: a cut file cannot be read.",
        },
    )
    timeoutSeconds = fields.Integer(
        load_default=20,
        validate=validate.Range(min=1, max=300),
        metadata={
            "title": "Timeout (seconds)",
            "description": "How long one fetch may take, redirects and download included.",
        },
    )


@dataclass(frozen=True)
class DomainRules:
    """The allow and deny lists, in ASCII form, checked against every host fetched."""

    allow: tuple[str, ...]
    deny: tuple[str, ...]

    @classmethod
    def from_lists(cls, allow: Iterable[str], deny: Iterable[str]) -> DomainRules:
        """Return rules from validated option lists."""
        return cls(allow=_ascii_entries(allow), deny=_ascii_entries(deny))

    def refusal(self, host: str | None) -> str | None:
        """Return why ``host`` may not be fetched (for the log), or None when it may."""
        ascii_form = ascii_host(host or "")
        if ascii_form is None:
            return "the URL has no usable host name"
        denied = next((entry for entry in self.deny if _covers(entry, ascii_form)), None)
        if denied:
            return f"{ascii_form} is covered by the deny list entry {denied}"
        if self.allow and not any(_covers(entry, ascii_form) for entry in self.allow):
            return f"{ascii_form} is outside the allow list"
        return None


def _ascii_entries(entries: Iterable[str]) -> tuple[str, ...]:
    return tuple(host for host in (ascii_host(e) for e in entries) if host)


def _covers(entry: str, host: str) -> bool:
    return host == entry or host.endswith("." + entry)
