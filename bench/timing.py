"""Timing a crowd of threads that start together: operations a second from the moment all are
ready until the last one ends."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

# ``work(number, go)``: prepare what is not timed, call ``go()``, then do the timed operations.
Work = Callable[[int, Callable[[], None]], None]


def per_second_together(threads: int, operations: int, work: Work) -> float:
    """Return the operations a second of ``threads`` threads each doing ``operations``.

    Thread ``n`` runs ``work(n, go)``; ``go()`` returns once every thread is ready, and the
    clock runs from then until the last thread ends, so what a thread prepares before ``go``
    is not timed. A thread's error is raised here once all have ended (a thread that fails
    before ``go`` releases the others instead of leaving them waiting).
    """
    start = threading.Barrier(threads + 1)
    errors: list[BaseException] = []

    def run(number: int) -> None:
        try:
            work(number, start.wait)
        except BaseException as exc:  # raised in the measuring thread below
            errors.append(exc)
            start.abort()

    crowd = [threading.Thread(target=run, args=(number,)) for number in range(threads)]
    for thread in crowd:
        thread.start()
    try:
        start.wait()
    except threading.BrokenBarrierError:
        pass  # a thread failed before it was ready: its error is raised below
    began = time.perf_counter()
    for thread in crowd:
        thread.join()
    if errors:
        raise errors[0]
    return threads * operations / (time.perf_counter() - began)
