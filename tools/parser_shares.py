"""Fair shares of the parser processes: no user's parsing makes another user's wait behind it.

A process has a few parser processes (``tools.parsers``), and uploads (in a web process) and
``web_fetch`` (in a worker) both parse there. Without shares, one user's many slow PDFs take
every process and everyone else's files queue behind all of them, or time out. ``FairParsers``
admits each job to a slot: while any job waits, a freed slot goes to the waiting user who holds
the fewest slots (the one who came first among equals), so a user who arrives while another
holds every slot runs next, after at most one of that user's jobs. A job waits at most
``queue_seconds`` (and never past its own signal), then is refused with a sentence.

The user a job is for is set around the call with ``acting_for`` (a context variable, so it
follows the request's or the tool call's thread, and no plugin needs to pass it on). Errors::

    ToolError (tools.api)
    └── ParsersBusy   no slot freed within the queue's time bound (or the caller's deadline)
    Cancelled         the caller's signal was cancelled while the job waited
"""

from __future__ import annotations

import contextvars
import itertools
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tools.api import Cancelled, Parsers, Signal, ToolError

T = TypeVar("T")
# Jobs run without ``acting_for`` (a plugin's own tests, the CLI) share one anonymous share.
NOBODY = ""
_acting_for: contextvars.ContextVar[str] = contextvars.ContextVar(
    "lookout_parser_user", default=NOBODY
)


class ParsersBusy(ToolError):
    """No parser process freed for this job within the time it may wait."""


@contextmanager
def acting_for(user: str) -> Iterator[None]:
    """Count the parser jobs started inside the block against ``user``'s share."""
    token = _acting_for.set(user)
    try:
        yield
    finally:
        _acting_for.reset(token)


@dataclass
class _Waiter:
    user: str
    order: int
    granted: bool = field(default=False)


class FairParsers:
    """``Parsers`` that admit each job to one of ``slots`` by fair share, then run it in
    ``parsers`` (see the module docstring)."""

    def __init__(self, parsers: Parsers, slots: int, queue_seconds: float) -> None:
        self.parsers = parsers
        self.slots = slots
        self.queue_seconds = queue_seconds
        self._changed = threading.Condition()
        self._held: Counter[str] = Counter()
        self._waiting: list[_Waiter] = []
        self._order = itertools.count()

    def run(self, job: Callable[..., T], *args: Any, signal: Signal, what: str) -> T:
        """Return ``job(*args)`` run by the wrapped parsers once the caller's user has a slot;
        ParsersBusy or Cancelled when none frees in time (see the module docstring)."""
        user = _acting_for.get()
        self._admit(user, signal, what)
        try:
            return self.parsers.run(job, *args, signal=signal, what=what)
        finally:
            self._leave(user)

    def held(self) -> dict[str, int]:
        """Return the slots each user holds now (for tests and health)."""
        with self._changed:
            return {user: n for user, n in self._held.items() if n}

    def waiting(self) -> dict[str, int]:
        """Return how many jobs each user has waiting for a slot now (for tests and health)."""
        with self._changed:
            return dict(Counter(waiter.user for waiter in self._waiting))

    def _admit(self, user: str, signal: Signal, what: str) -> None:
        waiter = _Waiter(user, next(self._order))
        give_up_at = time.monotonic() + self.queue_seconds
        undo = signal.on_cancel(self._wake)
        try:
            with self._changed:
                self._waiting.append(waiter)
                self._grant()
                while not waiter.granted:
                    left = min(give_up_at - time.monotonic(), signal.remaining())
                    if left <= 0:
                        self._waiting.remove(waiter)
                        self._grant()
                        raise self._refusal(signal, what)
                    self._changed.wait(left)
        finally:
            undo()

    def _grant(self) -> None:
        # Called with the condition held: fill free slots, fewest-held user first.
        while self._waiting and sum(self._held.values()) < self.slots:
            chosen = min(self._waiting, key=lambda w: (self._held[w.user], w.order))
            self._waiting.remove(chosen)
            self._held[chosen.user] += 1
            chosen.granted = True
            self._changed.notify_all()

    def _leave(self, user: str) -> None:
        with self._changed:
            self._held[user] -= 1
            if not self._held[user]:
                del self._held[user]
            self._grant()

    def _wake(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def _refusal(self, signal: Signal, what: str) -> Exception:
        if signal.cancelled and not signal.timed_out:
            return Cancelled(signal.reason or "cancelled")
        return ParsersBusy(
            f"Lookout's readers were busy with other people's pages and files, so {what} was "
            "not read. Try again in a minute."
        )


_shares: dict[int, tuple[Parsers, FairParsers]] = {}
_shares_lock = threading.Lock()


def fair_share(parsers: Parsers, slots: int, queue_seconds: float) -> FairParsers:
    """Return the one ``FairParsers`` of this process over ``parsers`` (made on first use), so
    that every host built over the same parser processes shares one admission."""
    with _shares_lock:
        known = _shares.get(id(parsers))
        if known is None or known[0] is not parsers:
            known = _shares[id(parsers)] = (parsers, FairParsers(parsers, slots, queue_seconds))
        shares = known[1]
        shares.slots, shares.queue_seconds = slots, queue_seconds
        return shares
