"""Streaming one model call of a turn: text published as it comes, sources, calls and usage."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import redis

from core.models.providers import DEFAULT_MAX_TOKENS
from core.turn import events
from core.turn.sources import Sources
from core.turn.state import TurnState
from tools.api import Signal
from workers.providers import (
    ChatProvider,
    ProviderCancelled,
    ProviderError,
    ReasoningDelta,
    SourceEvent,
    TextDelta,
    ToolCallRequest,
    ToolSpec,
    Usage,
)
from workers.providers.tokens import CHARS_PER_TOKEN
from workers.runtime import TEXT_BATCH_SECONDS, get_watcher

log = logging.getLogger("lookout.turns")
# A step's reasoning is kept up to this many times the characters its max_tokens allow the
# answer (servers that do not count reasoning in max_tokens would otherwise have no bound).
REASONING_CHARS_PER_ANSWER_CHAR = 2
REASONING_CUT_NOTE = "\n\n… (the rest of the reasoning was cut)"


class Reply:
    """What one model call said."""

    def __init__(self) -> None:
        self.text = ""
        self.reasoning = ""
        self.sources: list[dict[str, Any]] = []
        self.calls: list[ToolCallRequest] = []
        self.usage: Usage | None = None
        self.cancelled = False
        self.error: ProviderError | None = None


def stream_reply(
    state: TurnState,
    provider: ChatProvider,
    model_name: str,
    messages: list[dict[str, Any]],
    specs: list[ToolSpec],
    sources: Sources,
    max_tokens: int | None = None,
) -> Reply:
    """Stream the model's answer (at most ``max_tokens`` long), publishing text as it comes
    and citing its sources through the step's ``sources``.

    A ProviderError ends the stream and is returned in ``Reply.error`` with what came before.

    Reads nothing from the database: the caller ends its transaction first, so no connection
    is held while the model streams (a held one per stream capped concurrent turns at the
    connection pool's size).
    """
    turn_id = state.turn_id
    reply = Reply()
    signal = Signal()
    deltas = DeltaBuffer(state)
    thoughts = DeltaBuffer(state, events.reasoning_delta)
    room = reasoning_room(max_tokens)
    texts: list[str] = []  # joined once: += copied the whole answer on every token
    watcher = get_watcher()
    with (
        watcher.watching(turn_id, signal),
        watcher.ticking(thoughts.flush_due),
        watcher.ticking(deltas.flush_due),
    ):
        try:
            stream = provider.stream(
                model_name, messages, specs or None, signal=signal, max_tokens=max_tokens
            )
            for event in stream:
                if isinstance(event, ReasoningDelta):
                    kept = keep_reasoning(reply.reasoning, event.text, room)
                    if kept:
                        reply.reasoning += kept
                        thoughts.add(kept)
                    continue
                thoughts.flush()  # reasoning shows before the answer that follows it
                if isinstance(event, TextDelta) and event.text:
                    texts.append(event.text)
                    deltas.add(event.text)
                    continue
                deltas.flush()
                if isinstance(event, SourceEvent):
                    part = sources.claim(event.url, event.title)
                    if part is not None:
                        reply.sources.append(part)
                elif isinstance(event, ToolCallRequest):
                    reply.calls.append(event)
                elif isinstance(event, Usage):
                    reply.usage = event
        except ProviderCancelled:
            reply.cancelled = True
        except ProviderError as exc:  # what streamed before the failure is kept with it
            reply.error = exc
            reply.calls = []
            reply.usage = exc.usage or reply.usage
        finally:
            reply.text = "".join(texts)
            thoughts.flush()
            deltas.flush()
    reply.cancelled = reply.cancelled or signal.cancelled
    return reply


def reasoning_room(max_tokens: int | None) -> int:
    """Return the most characters of reasoning one step keeps, for an answer of ``max_tokens``."""
    answer_chars = (max_tokens or DEFAULT_MAX_TOKENS) * CHARS_PER_TOKEN
    return REASONING_CHARS_PER_ANSWER_CHAR * answer_chars


def keep_reasoning(kept: str, more: str, room: int) -> str:
    """Return the part of ``more`` reasoning to keep after ``kept``: all of it within ``room``
    characters, then the cut note once, then nothing."""
    if kept.endswith(REASONING_CUT_NOTE):
        return ""
    if len(kept) + len(more) <= room:
        return more
    return more[: max(0, room - len(kept))] + REASONING_CUT_NOTE


class DeltaBuffer:
    """Coalesces streamed text into one ``text.delta`` event per interval (or one event of
    the publisher given: reasoning goes out as ``reasoning.delta`` the same way).

    A token per Redis round trip made publishing a third of a step's CPU; pages cannot tell
    50 ms batches from single tokens. The stream's thread adds text and publishes when the
    interval has passed; the cancel watcher's thread calls ``flush_due`` on each of its polls,
    so text held when the model goes quiet goes out then, not when the model speaks again.
    Publishing happens under the lock, so batches keep their order; text that Redis does not
    take (a restart) is held and sent with the next batch.
    """

    INTERVAL_SECONDS = TEXT_BATCH_SECONDS

    def __init__(
        self, state: TurnState, publish: Callable[[TurnState, str], None] = events.text_delta
    ) -> None:
        self.state = state
        self.publish = publish
        self.pending: list[str] = []
        self.last_flush = time.monotonic()
        self._lock = threading.Lock()

    def add(self, text: str) -> None:
        """Buffer text, publishing what is buffered once the interval has passed."""
        with self._lock:
            self.pending.append(text)
            if time.monotonic() - self.last_flush >= self.INTERVAL_SECONDS:
                self._publish()

    def flush_due(self) -> None:
        """Publish what is buffered if it has waited the interval."""
        with self._lock:
            if self.pending and time.monotonic() - self.last_flush >= self.INTERVAL_SECONDS:
                self._publish()

    def flush(self) -> None:
        """Publish the buffered text now, if there is any."""
        if not self.pending:  # the answer's every token flushes the reasoning: mostly none
            self.last_flush = time.monotonic()
            return
        with self._lock:
            self._publish()

    def _publish(self) -> None:
        if self.pending:
            try:
                self.publish(self.state, "".join(self.pending))
            except redis.RedisError:
                # Redis is restarting: the text waits for the next flush, and the reply stores
                # it whether or not it is ever published.
                log.warning("turn=%s text held: Redis did not answer", self.state.turn_id)
                return
            self.pending = []
        self.last_flush = time.monotonic()


def add_step_tokens(total: dict | None, usage: Usage | None) -> dict | None:
    """Return the turn's token usage with one more model call's counts added; counts estimated
    from characters (the server reported none) are added to ``estimatedTokens`` as well, and
    the output tokens spent reasoning to ``reasoningTokens``."""
    if usage is None:
        return total
    total = dict(total or {"inputTokens": 0, "outputTokens": 0})
    total["inputTokens"] += usage.input_tokens
    total["outputTokens"] += usage.output_tokens
    if usage.reasoning_tokens:
        total["reasoningTokens"] = total.get("reasoningTokens", 0) + usage.reasoning_tokens
    if usage.estimated:
        total["estimatedTokens"] = (
            total.get("estimatedTokens", 0) + usage.input_tokens + usage.output_tokens
        )
    return total
