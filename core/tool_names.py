"""Tool names as metrics labels, usage rows and log lines take them: bounded, whatever a model says.

A model may call a tool by any name, of any length, with newlines in it. A name becomes a
label only when it names a tool an installed plugin registered (or, for a tool a tool source
listed, that source: ``source:<id>``, the id an administrator set); any other is ``unknown``.
So nothing the model says can make a new metric series or usage row, and a forged name cannot
start a new log line: every label is also cut to ``NAME_MAX`` characters and stripped of
control characters. What the model and the user read (the call's events, its stored name) is
left as the model said it.
"""

from __future__ import annotations

import unicodedata

from core.plugin_host import get_host

UNKNOWN = "unknown"
NAME_MAX = 64


def clean(name: str) -> str:
    """Return ``name`` without control or format characters (newlines among them), cut to
    ``NAME_MAX`` characters; ``unknown`` when nothing is left."""
    kept = "".join(ch for ch in name if unicodedata.category(ch)[0] not in ("C", "Z") or ch == " ")
    return kept.strip()[:NAME_MAX] or UNKNOWN


def tool_label(name: str | None, source: str | None = None) -> str:
    """Return the bounded label of a called tool: its name when an installed plugin registered
    it, ``source:<id>`` for a tool source's tool, else ``unknown``."""
    if source:
        return clean(f"source:{source}")
    if not isinstance(name, str) or get_host().owner(name) is None:
        return UNKNOWN
    return clean(name)
