"""Splits ``<think>…</think>`` out of a model's streamed text, across chunk boundaries.

Reasoning models served by llama.cpp, vLLM or Ollama without a reasoning parser write their
reasoning into the answer's text between ``<think>`` and ``</think>``. ``ThinkSplitter`` reads
the text as it streams and sends what is inside the tags as reasoning, the rest as answer; a tag
cut between two chunks is held until the next one says what it is, and a ``<think>`` the stream
never closes is reasoning to the end. A ``</think>`` outside reasoning is only text: telling a
tag a chat template opened in the prompt from one the model wrote would mean holding every
answer back until its end.
"""

from __future__ import annotations

from workers.providers.base import ReasoningDelta, TextDelta

OPEN = "<think>"
CLOSE = "</think>"


class ThinkSplitter:
    """Turns streamed text into TextDelta and ReasoningDelta events, in order."""

    def __init__(self) -> None:
        self._thinking = False
        self._held = ""  # the start of what may be a tag, cut by the chunk's end

    def add(self, text: str) -> list[TextDelta | ReasoningDelta]:
        """Return the events in one more piece of text."""
        if not self._held and not self._thinking and "<" not in text:  # most tokens: no tag
            return [TextDelta(text)] if text else []
        text = self._held + text
        self._held = ""
        events: list[TextDelta | ReasoningDelta] = []
        while text:
            tag = CLOSE if self._thinking else OPEN
            at = text.find(tag)
            if at < 0:
                keep = _partial_tag_length(text, tag)
                self._emit(events, text[: len(text) - keep])
                self._held = text[len(text) - keep :]
                break
            self._emit(events, text[:at])
            self._thinking = not self._thinking
            text = text[at + len(tag) :]
        return [e for e in events if e.text]

    def finish(self) -> list[TextDelta | ReasoningDelta]:
        """Return what is held at the stream's end: a cut tag that never completed is text."""
        held, self._held = self._held, ""
        events: list[TextDelta | ReasoningDelta] = []
        self._emit(events, held)
        return [e for e in events if e.text]

    def _emit(self, events: list[TextDelta | ReasoningDelta], text: str) -> None:
        if text:
            events.append(ReasoningDelta(text) if self._thinking else TextDelta(text))


def _partial_tag_length(text: str, tag: str) -> int:
    """Return the length of the longest end of ``text`` that begins ``tag`` (0 for none)."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0
