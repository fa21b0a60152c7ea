"""Tool work left running after its call ended, and the worker's pause while there is too much.

A tool call that ignores its signal cannot be killed from Python: its thread is abandoned and
the turn goes on. Each one holds memory and perhaps the GIL, so past ``ABANDONED_MAX`` of them
a worker stops taking tasks from the queue (other workers take them) until enough have ended,
and says so in its log. Parsing, the usual CPU hog, runs in parser processes that are killed
instead (``tools.parsers``), so this is the backstop for plugins' own code.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from celery import bootsteps
from celery.worker.consumer import Consumer

log = logging.getLogger("lookout.tools")


class AbandonedWork:
    """Counts abandoned threads; calls ``pause`` above the limit and ``resume`` once below."""

    def __init__(self, pause: Callable[[], None], resume: Callable[[], None]) -> None:
        self._pause = pause
        self._resume = resume
        self._lock = threading.Lock()
        self._count = 0
        self._paused = False

    @property
    def count(self) -> int:
        """How many abandoned threads are still running."""
        return self._count

    @property
    def paused(self) -> bool:
        """Whether this worker has stopped taking tasks."""
        return self._paused

    def adopt(self, limit: int) -> None:
        """Count one more abandoned thread; pause when there are more than ``limit``."""
        with self._lock:
            self._count += 1
            pause = self._count > limit and not self._paused
            self._paused = self._paused or pause
            count = self._count
        if pause:
            log.warning(
                "this worker takes no new task: %d tool threads are still running after their "
                "calls ended (ABANDONED_MAX=%d); it resumes when they end",
                count,
                limit,
            )
            self._pause()

    def release(self, limit: int) -> None:
        """Count one abandoned thread as ended; resume when at most ``limit`` are left."""
        with self._lock:
            self._count -= 1
            resume = self._paused and self._count <= limit
            self._paused = self._paused and not resume
            count = self._count
        if resume:
            log.info("this worker takes tasks again: %d abandoned tool threads left", count)
            self._resume()


class _ConsumerStep(bootsteps.StartStopStep):
    """Keeps the worker's consumer, so that a task thread can pause and resume its queue."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def start(self, parent: Consumer) -> None:
        _consumer["current"] = parent

    def stop(self, parent: Consumer) -> None:
        _consumer.pop("current", None)


_consumer: dict[str, Consumer] = {}
_paused_queues: list[str] = []


def _pause_queues() -> None:
    consumer = _consumer.get("current")
    if consumer is None or consumer.task_consumer is None:
        return
    _paused_queues[:] = [queue.name for queue in consumer.task_consumer.queues]
    for name in _paused_queues:
        # call_soon: the consumer's own thread changes what it consumes
        consumer.call_soon(consumer.cancel_task_queue, name)


def _resume_queues() -> None:
    consumer = _consumer.get("current")
    if consumer is not None:
        for name in _paused_queues:
            consumer.call_soon(consumer.add_task_queue, name)


abandoned = AbandonedWork(pause=_pause_queues, resume=_resume_queues)


def install(celery_app) -> None:
    """Add the consumer step to a Celery app (the workers' app does at import)."""
    celery_app.steps["consumer"].add(_ConsumerStep)
