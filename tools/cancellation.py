"""Cancellation for tools: a Signal that trips on cancel or at a deadline, and Cancelled.

Part of the plugin API; import both from ``tools.api``.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable


class Cancelled(Exception):
    """The turn was cancelled, or the tool call's deadline passed."""


class Signal:
    """Tells a tool to stop: trips when ``cancel()`` is called or the deadline passes.

    ``deadline`` is a ``time.monotonic()`` value, or None for no deadline.
    """

    def __init__(self, deadline: float | None = None) -> None:
        self.deadline = deadline
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self._timer: threading.Timer | None = None
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
        """Call ``callback`` once when the signal trips (at once if it has); return an undo."""
        with self._lock:
            tripped = self._event.is_set()
            if not tripped:
                self._callbacks.append(callback)
                self._arm_timer()
        if tripped:
            callback()
            return lambda: None

        def undo() -> None:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return undo

    def _arm_timer(self) -> None:
        if self._timer is None and self.deadline is not None:
            delay = max(0.0, self.deadline - time.monotonic())
            self._timer = threading.Timer(delay, self._trip, args=("timeout",))
            self._timer.daemon = True
            self._timer.start()

    def _trip(self, reason: str) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
            if self._timer is not None:
                self._timer.cancel()
        for callback in callbacks:
            try:
                callback()
            except Exception:  # a broken callback must not stop the others
                logging.getLogger("lookout.tools").exception("signal callback failed")
