"""Cancellation for tools: a Signal that trips on cancel or at a deadline, and Cancelled.

Part of the plugin API; import both from ``tools.api``.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import os
import threading
import time
from collections.abc import Callable

log = logging.getLogger("lookout.tools")


class Cancelled(Exception):
    """The turn was cancelled, or the tool call's deadline passed."""


class Signal:
    """Tells a tool to stop: trips when ``cancel()`` is called or the deadline passes.

    ``deadline`` is a ``time.monotonic()`` value, or None for no deadline. A signal with a
    deadline and an ``on_cancel`` callback is tripped at its deadline by the process's one
    deadline thread (``Deadlines``), which runs the callbacks.
    """

    def __init__(self, deadline: float | None = None) -> None:
        self.deadline = deadline
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self._armed = False  # in the deadline thread's heap (maybe as an entry it will drop)
        self.reason: str | None = None

    @classmethod
    def after(cls, seconds: float) -> Signal:
        """Return a signal whose deadline is ``seconds`` from now."""
        return cls(deadline=time.monotonic() + seconds)

    @property
    def cancelled(self) -> bool:
        """True once cancelled or past the deadline."""
        if self._event.is_set():
            return True
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self._trip("timeout")
            return True
        return False

    @property
    def timed_out(self) -> bool:
        """True when the signal tripped because the deadline passed."""
        return self.cancelled and self.reason == "timeout"

    def cancel(self) -> None:
        """Trip the signal: the turn was cancelled."""
        self._trip("cancelled")

    def raise_if_cancelled(self) -> None:
        """Raise ``Cancelled`` when the signal has tripped."""
        if self.cancelled:
            raise Cancelled(self.reason or "cancelled")

    def remaining(self) -> float:
        """Seconds left before the deadline (``math.inf`` without one, 0 once tripped)."""
        if self.cancelled:
            return 0.0
        if self.deadline is None:
            return math.inf
        return max(0.0, self.deadline - time.monotonic())

    def timeout(self, limit: float) -> float:
        """Return ``limit`` or the time remaining, whichever is smaller (for HTTP timeouts)."""
        remaining = self.remaining()
        if remaining <= 0:
            raise Cancelled(self.reason or "cancelled")
        return min(limit, remaining)

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``, waking early when tripped; return whether it tripped."""
        limit = min(seconds, self.remaining())
        if limit > 0:
            self._event.wait(limit)
        return self.cancelled

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` once when the signal trips (at once if it has); return an undo.

        Callbacks run on the thread that trips the signal: the deadline's on the process's one
        deadline thread, so they must be short (a socket shutdown, a kill) or they delay the
        other signals' deadlines."""
        with self._lock:
            tripped = self._event.is_set()
            arm = not tripped and not self._armed and self.deadline is not None
            if not tripped:
                self._callbacks.append(callback)
                self._armed = self._armed or arm
        if tripped:
            callback()
            return lambda: None
        if arm:
            deadlines.add(self)

        def undo() -> None:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return undo

    def _disarm_if_idle(self) -> bool:
        """Leave the deadline heap if nothing waits for the deadline (tripped, or every callback
        undone): tripping it then would change nothing a reader sees. Return whether it left."""
        with self._lock:
            if self._event.is_set() or not self._callbacks:
                self._armed = False
            return not self._armed

    def _trip(self, reason: str) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        stopped: BaseException | None = None
        for callback in callbacks:
            try:
                callback()
            except Exception:  # a broken callback must not stop the others
                log.exception("signal callback failed")
            except BaseException as exc:  # SystemExit, KeyboardInterrupt: the others run first
                stopped = stopped or exc
        if stopped is not None:
            raise stopped


class Deadlines:
    """One thread per process trips the signals whose deadlines pass, from a heap of them.

    A thread per signal (``threading.Timer``) cost a thread start per tool call and download,
    and slept until the deadline even after the call ended. Here an ended signal's entry stays
    in the heap, untouched, until it reaches the top, where the thread drops it with every
    ended one above the next live deadline in one wake-up (at most the one it slept for), so a
    call that ends costs nothing more. A callback that raises, even SystemExit, is logged and
    the thread goes on; were it to end anyway, the next deadline armed starts another. The
    thread starts with the first deadline;
    a forked child starts with an empty heap and no thread (``os.register_at_fork``), since the
    parent's thread does not survive the fork and its lock may have been held.
    """

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Signal]] = []
        self._order = itertools.count()  # ties never compare two signals
        self._changed = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None

    def forget(self) -> None:
        """Start over empty, without a thread: for a child process just forked. The signals the
        parent armed never trip at their deadline here (a reader still sees them past it)."""
        self._heap = []
        self._changed = threading.Condition(threading.Lock())
        self._thread = None

    def add(self, signal: Signal) -> None:
        """Trip ``signal`` at its deadline, unless it is tripped or idle by then."""
        assert signal.deadline is not None
        entry = (signal.deadline, next(self._order), signal)
        with self._changed:
            heapq.heappush(self._heap, entry)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="deadlines", daemon=True)
                self._thread.start()
            elif self._heap[0] is entry:
                self._changed.notify()  # sooner than the thread sleeps until

    def _due(self) -> list[Signal]:
        """Pop and return the signals whose deadline passed; drop idle ones at the top."""
        due: list[Signal] = []
        now = time.monotonic()
        while self._heap:
            deadline, _, signal = self._heap[0]
            if deadline <= now:
                due.append(signal)
            elif not signal._disarm_if_idle():
                break
            heapq.heappop(self._heap)
        return due

    def _run(self) -> None:
        while True:
            with self._changed:
                due = self._due()
                if not due:
                    self._changed.wait(self._heap[0][0] - time.monotonic() if self._heap else None)
                    continue
            for signal in due:
                try:
                    signal._trip("timeout")
                except BaseException:  # SystemExit would end the thread: no deadline after it
                    log.exception("signal callback failed")


deadlines = Deadlines()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=deadlines.forget)
