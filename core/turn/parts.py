"""The parts of a stored message: one constructor per part type, and the readers.

A message's ``parts`` are JSON, in order (DESIGN.md, "Message parts"):
    text         {"type": "text", "text", "citations"?}
    tool-call    {"type": "tool-call", "id", "name", "input"}
    tool-result  {"type": "tool-result", "callId", "name", "output" | "error", "outcome",
                  "sources"?}
    source       {"type": "source", "url", "title", "number"?}
    attachment   {"type": "attachment", "uploadId", "filename", "mimeType"}
    reasoning    {"type": "reasoning", "text"}: what the model thought before a step's answer,
                 shown folded, never sent back to the model
    follow-ups   {"type": "follow-ups", "questions"}: short questions to ask next, last in a
                 completed reply
An attachment refers to its upload, whose text is kept once (``core.models.uploads``); the
prompt reads it through ``attachment_with_text``. Messages stored before uploads were referred
to carry ``"text"`` in the part itself instead of ``"uploadId"``.
A reply's sources are numbered in the order they are first cited (``number``); a tool result
lists the numbers of the sources it cites (``sources``), and once the turn ended a reply's
text lists its ``[n]`` markers as checked (``citations``, ``core.turn.checks``).
Only this module spells those shapes; everything else builds and reads parts through it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

Part = dict[str, Any]

TEXT = "text"
TOOL_CALL = "tool-call"
TOOL_RESULT = "tool-result"
SOURCE = "source"
ATTACHMENT = "attachment"
REASONING = "reasoning"
FOLLOW_UPS = "follow-ups"


def text_part(text: str, citations: list[dict[str, Any]] | None = None) -> Part:
    """Return a text part, with its checked citations when given."""
    part: Part = {"type": TEXT, "text": text}
    if citations is not None:
        part["citations"] = citations
    return part


def tool_call_part(call_id: str, name: str, input: Any) -> Part:
    """Return the part of a tool call the model asked for."""
    return {"type": TOOL_CALL, "id": call_id, "name": name, "input": input}


def tool_result_part(
    call_id: str,
    name: str,
    outcome: str,
    output: Any = None,
    error: str | None = None,
    sources: list[int] | None = None,
) -> Part:
    """Return a tool call's result part: its raw output when ``outcome`` is ok, else its error;
    ``sources``: the numbers of the sources it cites, when it cites any."""
    part: Part = {"type": TOOL_RESULT, "callId": call_id, "name": name}
    if outcome == "ok":
        part["output"] = output
    else:
        part["error"] = error
    part["outcome"] = outcome
    if sources:
        part["sources"] = sources
    return part


def reasoning_part(text: str) -> Part:
    """Return the part of a step's reasoning."""
    return {"type": REASONING, "text": text}


def follow_ups_part(questions: list[str]) -> Part:
    """Return the part of questions the user may ask next."""
    return {"type": FOLLOW_UPS, "questions": list(questions)}


def source_part(url: str, title: str | None, number: int | None = None) -> Part:
    """Return a source part: a link the reply cites, with its number in the reply when known."""
    part: Part = {"type": SOURCE, "url": url, "title": title}
    if number is not None:
        part["number"] = number
    return part


def attachment_part(upload_id: str, filename: str, mime_type: str) -> Part:
    """Return the part of a file attached to a user message: a reference to its upload."""
    return {"type": ATTACHMENT, "uploadId": upload_id, "filename": filename, "mimeType": mime_type}


def attached_upload_id(part: Mapping[str, Any]) -> str | None:
    """Return the upload an attachment part refers to; None for any other part, and for an
    attachment that carries its text."""
    return part.get("uploadId") if part.get("type") == ATTACHMENT else None


def attachment_with_text(part: Mapping[str, Any], text: str) -> Part:
    """Return an attachment part as the prompt reads it: with its upload's text."""
    return {**part, "text": text}


def kind_of(part: Mapping[str, Any]) -> str | None:
    """Return a part's type, None for a part without one."""
    return part.get("type")


def of_kind(parts: Iterable[Mapping[str, Any]], wanted: str) -> list[Mapping[str, Any]]:
    """Return the parts of one type, in order."""
    # Read inline, not through kind_of: a prompt reads every part of the conversation.
    return [p for p in parts if p.get("type") == wanted]


def source_urls(parts: Iterable[Mapping[str, Any]]) -> set[str]:
    """Return the URLs of the source parts among ``parts``."""
    return {p["url"] for p in of_kind(parts, SOURCE)}
