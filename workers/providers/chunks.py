"""Assembles OpenAI chat.completion.chunk objects into provider events, tool calls by index."""

from __future__ import annotations

import json
import uuid
from typing import Any

from workers.providers.base import (
    Finished,
    ProviderEvent,
    SourceEvent,
    TextDelta,
    ToolCallRequest,
    Usage,
)
from workers.providers.openai_errors import ProviderIdentity, unreadable


class ReplyAssembler:
    """Turns chat.completion.chunk objects into events, assembling tool calls by index."""

    def __init__(self, who: ProviderIdentity) -> None:
        self._who = who
        self._calls: dict[int | str, dict[str, str]] = {}
        self._usage: Usage | None = None
        self._reason: str | None = None

    def add(self, chunk: Any) -> list[ProviderEvent]:
        """The events in one chunk; tool-call fragments are kept until ``finish``."""
        if not hasattr(chunk, "choices"):
            raise unreadable(self._who)
        events: list[ProviderEvent] = []
        for choice in chunk.choices or ():
            delta = choice.delta
            if delta is not None:
                if delta.content:
                    events.append(TextDelta(delta.content))
                for position, call in enumerate(delta.tool_calls or ()):
                    self._add_call_fragment(position, call)
                events.extend(_sources((delta.model_extra or {}).get("annotations")))
            if choice.finish_reason:
                self._reason = choice.finish_reason
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self._usage = Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0)
        return events

    def _add_call_fragment(self, position: int, call: Any) -> None:
        key = call.index if call.index is not None else (call.id or position)
        entry = self._calls.setdefault(key, {"id": "", "name": "", "arguments": ""})
        if call.id and not entry["id"]:
            entry["id"] = call.id
        function = call.function
        if function is not None:
            if function.name and not entry["name"]:
                entry["name"] = function.name
            entry["arguments"] += function.arguments or ""

    def finish(self) -> list[ProviderEvent]:
        """The tool calls, the usage when reported, and Finished."""
        events: list[ProviderEvent] = [_tool_call(entry) for entry in self._calls.values()]
        if self._usage is not None:
            events.append(self._usage)
        events.append(Finished(self._reason or "stop"))
        return events


def _tool_call(entry: dict[str, str]) -> ToolCallRequest:
    raw = entry["arguments"]
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        arguments = None
    call_id = entry["id"] or f"call_{uuid.uuid4().hex[:24]}"
    return ToolCallRequest(call_id, entry["name"], arguments, raw)


def _sources(annotations: Any) -> list[ProviderEvent]:
    """SourceEvents from ``url_citation`` annotations (OpenAI's search models, OpenRouter)."""
    events: list[ProviderEvent] = []
    for note in annotations if isinstance(annotations, list) else ():
        citation = note.get("url_citation") if isinstance(note, dict) else None
        if isinstance(citation, dict) and isinstance(citation.get("url"), str):
            title = citation.get("title")
            events.append(SourceEvent(citation["url"], title if isinstance(title, str) else None))
    return events
