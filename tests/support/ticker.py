"""A thread that ticks every 10 ms and records its longest wait: the other work of a process.

While a test makes a process parse something hostile, a Ticker in that process stands in for
its other turns: if the parse held the GIL (or the process), the ticker's longest wait shows it.
"""

from __future__ import annotations

import threading
import time


class Ticker(threading.Thread):
    """Ticks every 10 ms until ``done`` is set; ``longest`` is the longest gap seen, in seconds."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.done = threading.Event()
        self.longest = 0.0

    def run(self) -> None:
        last = time.monotonic()
        while not self.done.wait(0.01):
            now = time.monotonic()
            self.longest = max(self.longest, now - last)
            last = now

    def __enter__(self) -> Ticker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.join()
