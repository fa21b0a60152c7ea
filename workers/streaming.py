"""Streaming one model call of a turn: text published as it comes, sources, calls and usage."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import redis

from core.turn import events
from core.turn.sources import Sources
from core.turn.state import TurnState
from tools.api import Signal
from workers.providers import (
    ChatProvider,
    ProviderCancelled,
    ProviderError,
    SourceEvent,
    TextDelta,
    ToolCallRequest,
    ToolSpec,
    Usage,
)
from workers.runtime import get_watcher

log = logging.getLogger("lookout.turns")


class Reply:
    """What one model call said."""

    def __init__(self) -> None:
        self.text = ""
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
    watcher = get_watcher()
    with watcher.watching(turn_id, signal), watcher.ticking(deltas.flush_due):
        try:
            stream = provider.stream(
                model_name, messages, specs or None, signal=signal, max_tokens=max_tokens
            )
            for event in stream:
                if isinstance(event, TextDelta) and event.text:
                    reply.text += event.text
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
            deltas.flush()
    reply.cancelled = reply.cancelled or signal.cancelled
    return reply


class DeltaBuffer:
    """Coalesces streamed text into one ``text.delta`` event per interval.

    A token per Redis round trip made publishing a third of a step's CPU; pages cannot tell
    50 ms batches from single tokens. The stream's thread adds text and publishes when the
    interval has passed; the cancel watcher's thread calls ``flush_due`` on each of its polls,
    so text held when the model goes quiet goes out then, not when the model speaks again.
    Publishing happens under the lock, so batches keep their order; text that Redis does not
    take (a restart) is held and sent with the next batch.
    """

    INTERVAL_SECONDS = 0.05

    def __init__(self, state: TurnState) -> None:
        self.state = state
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
        with self._lock:
            self._publish()

    def _publish(self) -> None:
        if self.pending:
            try:
                events.text_delta(self.state, "".join(self.pending))
            except redis.RedisError:
                # Redis is restarting: the text waits for the next flush, and the reply stores
                # it whether or not it is ever published.
                log.warning("turn=%s text held: Redis did not answer", self.state.turn_id)
                return
            self.pending = []
        self.last_flush = time.monotonic()


def add_step_tokens(total: dict | None, usage: Usage | None) -> dict | None:
    """Return the turn's token usage with one more model call's counts added; counts estimated
    from characters (the server reported none) are added to ``estimatedTokens`` as well."""
    if usage is None:
        return total
    total = dict(total or {"inputTokens": 0, "outputTokens": 0})
    total["inputTokens"] += usage.input_tokens
    total["outputTokens"] += usage.output_tokens
    if usage.estimated:
        total["estimatedTokens"] = (
            total.get("estimatedTokens", 0) + usage.input_tokens + usage.output_tokens
        )
    return total
