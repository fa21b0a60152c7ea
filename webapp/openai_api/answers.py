"""A finished turn as OpenAI's client reads it: a ``chat.completion``, or the chunks of one.

The answer's text is the reply's text; when the reply cites sources, a numbered list of
Markdown links follows it (``Sources:`` then ``1. [title](url)``), and the same list, with
where the turn is stored, is the answer's ``lookout`` field. What the model reasoned goes in
``reasoning_content`` (DeepSeek's name, which OpenAI's clients that show reasoning read), never
in ``content``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from core.models import Turn
from core.turn.parts import REASONING, SOURCE, TEXT, of_kind

OBJECT = "chat.completion"
CHUNK = "chat.completion.chunk"
DONE = "data: [DONE]\n\n"


def completion_id(turn: Turn) -> str:
    """Return the id of the completion a turn answers."""
    return f"chatcmpl-{turn.id}"


def created(turn: Turn) -> int:
    """Return when the turn was made, in seconds since the epoch."""
    return int(turn.created_at.timestamp())


def reply_text(parts: Iterable[Mapping[str, Any]]) -> str:
    """Return the text of a reply's parts, in order."""
    return "".join(p.get("text") or "" for p in of_kind(parts, TEXT))


def reasoning_text(parts: Iterable[Mapping[str, Any]]) -> str:
    """Return what the reply's model reasoned, step after step ("" for none)."""
    return "\n\n".join(p.get("text") or "" for p in of_kind(parts, REASONING))


def numbered_sources(parts: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Return the reply's sources as ``{number, url, title}``: the number its ``[n]``
    markers cite (stored with the part; replies stored before are numbered from 1 in order)."""
    return [
        {"number": p.get("number") or n, "url": p["url"], "title": p.get("title")}
        for n, p in enumerate(of_kind(parts, SOURCE), start=1)
    ]


def link_text(title: str) -> str:
    """Return a title as the text of a Markdown link (its brackets escaped)."""
    cleaned = " ".join(title.split())
    return cleaned.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def link_target(url: str) -> str:
    """Return a URL as a Markdown link's target: what would end it early, percent-encoded."""
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def sources_markdown(sources: list[dict[str, Any]]) -> str:
    """Return the numbered Markdown list of sources that follows an answer, "" for none."""
    if not sources:
        return ""
    lines = [
        f"{s['number']}. [{link_text(s['title'] or s['url'])}]({link_target(s['url'])})"
        for s in sources
    ]
    return "\n\nSources:\n" + "\n".join(lines)


def usage_of(turn: Turn) -> dict[str, int]:
    """Return the turn's token usage as OpenAI counts it."""
    usage = turn.usage or {}
    prompt = int(usage.get("inputTokens") or 0)
    completion = int(usage.get("outputTokens") or 0)
    counted: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if usage.get("reasoningTokens"):
        counted["completion_tokens_details"] = {"reasoning_tokens": int(usage["reasoningTokens"])}
    return counted


def answer_message(parts: list[dict[str, Any]], sources: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the answer's message: its text and sources, and its reasoning when it has any."""
    message = {"role": "assistant", "content": reply_text(parts) + sources_markdown(sources)}
    reasoning = reasoning_text(parts)
    if reasoning:
        message["reasoning_content"] = reasoning
    return message


def lookout_field(turn: Turn, sources: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the answer's ``lookout`` field: the stored turn and the sources."""
    return {"conversationId": turn.conversation_id, "turnId": turn.id, "sources": sources}


def make_completion(turn: Turn, parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Return a completed turn as a ``chat.completion``."""
    sources = numbered_sources(parts)
    return {
        "id": completion_id(turn),
        "object": OBJECT,
        "created": created(turn),
        "model": turn.model,
        "choices": [
            {
                "index": 0,
                "message": answer_message(parts, sources),
                "finish_reason": "stop",
            }
        ],
        "usage": usage_of(turn),
        "lookout": lookout_field(turn, sources),
    }


def make_chunk(
    turn: Turn, delta: dict[str, Any], finish_reason: str | None = None, **extra: Any
) -> dict[str, Any]:
    """Return one ``chat.completion.chunk`` of a turn's streamed answer."""
    return {
        "id": completion_id(turn),
        "object": CHUNK,
        "created": created(turn),
        "model": turn.model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        **extra,
    }


def usage_chunk(turn: Turn) -> dict[str, Any]:
    """Return the chunk that ends a stream with its usage (``stream_options.include_usage``)."""
    chunk = make_chunk(turn, {})
    chunk["choices"] = []
    chunk["usage"] = usage_of(turn)
    return chunk


def event(data: Mapping[str, Any]) -> str:
    """Return one Server-Sent Event carrying ``data`` as JSON."""
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"
