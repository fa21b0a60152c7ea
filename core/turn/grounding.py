"""How a reply used the web, in one line: derived from the turn's tool calls and their outcomes.

Stored beside the reply's parts (``Message.grounding``) as ``{"summary", "searches", "reads",
"failed"}``: the sentence, the searches and reads that gave a result, and the calls that failed.

Each call carries its tool's grounding kind as the step offered it (``Tool.grounding``, stored
in ``ToolCall.grounding``): "search" or "read". A reply that searched says how many searches
gave results ("Searched 2 times"), one whose every search failed says why with the failed call's
own error ("Search failed: SearXNG did not answer within 15 seconds."), reads count the same
way, and a completed reply with neither "Answered without the web". Calls stopped with the turn
count for nothing: they neither grounded the answer nor failed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Grounding = dict[str, Any]

WITHOUT_THE_WEB = "Answered without the web"
# Outcomes of a call that was run and did not give a result (DESIGN.md, "Observability").
FAILED_OUTCOMES = ("error", "timeout", "refused")
# The longest error quoted in a summary: a plugin's error is a sentence, not a page.
ERROR_CHARS = 300


def grounding_of(calls: Iterable[Any]) -> Grounding | None:
    """Return the grounding of a reply made with ``calls`` (rows with ``grounding``,
    ``outcome`` and ``error``), None when no call of the reply searched or read."""
    calls = list(calls)
    done = {kind: [c for c in calls if c.grounding == kind] for kind in ("search", "read")}
    ok = {kind: sum(c.outcome == "ok" for c in done[kind]) for kind in done}
    failed = {kind: [c for c in done[kind] if c.outcome in FAILED_OUTCOMES] for kind in done}
    said = [
        _count(verb, ok[kind], noun, len(failed[kind]))
        for kind, verb, noun in (("search", "searched", "time"), ("read", "read", "page"))
        if ok[kind]
    ]
    sentences = [_capitalised(", ".join(said))] if said else []
    sentences += [
        f"{failure}: {_quoted(failed[kind][-1].error)}"
        for kind, failure in (("search", "Search failed"), ("read", "Reading failed"))
        if failed[kind] and not ok[kind]
    ]
    if not sentences:
        return None
    if len(sentences) > 1 and not sentences[0].endswith("."):
        sentences[0] += "."
    failures = len(failed["search"]) + len(failed["read"])
    return make_grounding(" ".join(sentences), ok["search"], ok["read"], failures)


def without_the_web() -> Grounding:
    """Return the grounding of a reply that neither searched nor read."""
    return make_grounding(WITHOUT_THE_WEB, 0, 0, 0)


def make_grounding(summary: str, searches: int, reads: int, failed: int) -> Grounding:
    """Return a grounding: its sentence and its counts."""
    return {"summary": summary, "searches": searches, "reads": reads, "failed": failed}


def _count(verb: str, count: int, noun: str, failed: int) -> str:
    said = f"{verb} {count} {noun if count == 1 else noun + 's'}"
    return f"{said} ({failed} failed)" if failed else said


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _quoted(error: str | None) -> str:
    """Return a failed call's error as the summary quotes it: one line, bounded."""
    error = " ".join((error or "The call failed.").split())
    return error if len(error) <= ERROR_CHARS else error[: ERROR_CHARS - 1] + "…"
