"""Running a coroutine to its end from a test, whatever event loop the test's thread runs."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


def run_coroutine(make: Callable[[], Awaitable[T]]) -> T:
    """Return what the coroutine ``make()`` returns, run by ``asyncio.run`` in a thread of its
    own: Playwright's sync API keeps a loop running in the test's thread for the whole session,
    where ``asyncio.run`` refuses to start (the Chromium tests run before these)."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = asyncio.run(make())
        except BaseException as exc:  # handed to the test's thread, as raised
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="test-coroutine")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
