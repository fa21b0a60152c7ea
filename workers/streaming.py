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
from workers.runtime import get_watcher
from workers.watch import TEXT_BATCH_SECONDS

log = logging.getLogger("lookout.turns")
# A step's reasoning is kept up to this many times the characters its max_tokens allow the
# answer (servers that do not count reasoning in max_tokens would otherwise have no bound).
REASONING_CHARS_PER_ANSWER_CHAR = 2
# Text the watcher has not published this long after it came is sent by the stream's thread
# (``DeltaBuffer``): two of the watcher's text batches.
LATE_TEXT_SECONDS = 2 * TEXT_BATCH_SECONDS
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
    watcher = get_watcher()
    deltas = DeltaBuffer(state, held=watcher.text_held)
    thoughts = DeltaBuffer(state, events.reasoning_event, watcher.text_held)
    room = reasoning_room(max_tokens)
    texts: list[str] = []  # joined once: += copied the whole answer on every token
    with (
        watcher.watching(turn_id, signal),
        watcher.holding(thoughts),
        watcher.holding(deltas),
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
    """Coalesces streamed text into one ``text.delta`` event per cancel-watcher poll (or one
    event of the maker given: reasoning goes out as ``reasoning.delta`` the same way); ``held``
    is called after each text added (the watcher's ``text_held``, which sends when one is due),
    ``answered`` before a flush (the watcher's ``answer_sent``, given by ``holding``: a send left
    in flight holds the lock until its answers are read).

    A token per Redis round trip made publishing a third of a step's CPU; pages cannot tell
    50 ms batches from single tokens. The watcher sends what is held (``queue``/``settle``, in
    one round trip with every other stream's held text), at most once every text batch: on the
    stream's own thread when ``held`` finds the last send that long ago, else on its text
    thread. The stream's thread publishes this buffer alone only on ``flush``: before any other
    event of the turn, and at the end. Either publishes under the lock, and text leaves
    the buffer only once Redis took it, so batches keep their order and a flush waits for the
    watcher's batch in flight; text that Redis does not take (a restart) is held and sent with
    the next batch. Text the watcher has not taken ``late_seconds`` after it came (its thread
    starved on a busy machine, its round trip slow) goes with the stream's next text, from the
    stream's own thread: a late watcher costs a round trip, never a stalled answer.
    """

    def __init__(
        self,
        state: TurnState,
        make: Callable[[str], tuple[str, dict[str, Any]]] = events.text_event,
        held: Callable[[], None] = lambda: None,
        late_seconds: float = LATE_TEXT_SECONDS,
    ) -> None:
        self.state = state
        self.make = make
        self.held = held
        self.answered: Callable[[], None] = lambda: None  # the watcher's, once it holds this
        self.late_seconds = late_seconds
        self.pending: list[str] = []
        self.since = 0.0  # when the oldest text held came, about: a late flush at worst
        self.taken = 0  # how much of ``pending`` the watcher's send took, until ``settle``
        self._lock = threading.Lock()

    def add(self, text: str) -> None:
        """Buffer text for the watcher's next send, then call ``held``; publish it now if what
        was held already waited ``late_seconds``."""
        self.pending.append(text)  # atomic: the watcher takes from the front, under the lock
        if len(self.pending) == 1:
            self.since = time.monotonic()
        elif time.monotonic() - self.since >= self.late_seconds:
            if self._lock.acquire(blocking=False):  # else the watcher is sending it now
                try:
                    self._send()
                finally:
                    self._lock.release()
        self.held()

    def flush(self) -> None:
        """Publish the buffered text now, if there is any."""
        if not self.pending:  # the answer's every token flushes the reasoning: mostly none
            return
        self.answered()  # a send in flight holds the lock until its answers are read
        while not self._lock.acquire(timeout=self.late_seconds):
            self.answered()  # another stream's send took it since: read its answers
        try:
            self._send()
        finally:
            self._lock.release()

    def _send(self) -> None:
        """Publish what is held (the lock held)."""
        taken = len(self.pending)
        if not taken:
            return
        try:
            self.state.publish(*self.make("".join(self.pending[:taken])))
        except redis.RedisError:
            # Redis is restarting: the text waits for the next flush, and the reply stores
            # it whether or not it is ever published.
            log.warning("turn=%s text held: Redis did not answer", self.state.turn_id)
            return
        del self.pending[:taken]

    def queue(self) -> bytes | None:
        """Take the held text for the watcher's send, keeping the lock until ``settle``: return
        its publish, packed (``TurnState.publish_command``), or None when none is held or the
        stream's thread is publishing it now."""
        if not self.pending or not self._lock.acquire(blocking=False):
            return None
        self.taken = len(self.pending)
        try:
            if self.taken:
                return self.state.publish_command(*self.make("".join(self.pending[: self.taken])))
        except Exception:
            log.warning("turn=%s text held: not queued", self.state.turn_id, exc_info=True)
        self.taken = 0
        self._lock.release()
        return None

    def settle(self, answer: Any) -> None:
        """Take the answer of the publish ``queue`` queued and release the lock: the text sent
        leaves the buffer (dropped too once the turn ended); text Redis refused stays."""
        try:
            if isinstance(answer, Exception):
                log.warning("turn=%s text held: %s", self.state.turn_id, answer)
            else:
                del self.pending[: self.taken]
        finally:
            self.taken = 0
            self._lock.release()


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
