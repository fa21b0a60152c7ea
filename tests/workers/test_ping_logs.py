"""The health ping's task lines stay out of the worker's INFO log; other tasks' lines stay in.

Regression: ./run's terminal filled with two "Task lookout.ping[...]" lines every five seconds,
and the admin's first password scrolled away within a minute.
"""

from __future__ import annotations

import logging

import pytest
from celery.app import trace

import workers  # noqa: F401  (the Celery app installs the filter when it is made)
from core import broker


def log_task_lines(task_name: str) -> None:
    """Log the "received" and "succeeded" lines exactly as Celery's worker does for a task."""
    context = {"id": "abc", "name": task_name, "args": "()", "kwargs": "{}", "eta": None}
    logging.getLogger("celery.worker.strategy").info(trace.LOG_RECEIVED, context)
    trace.info(trace.LOG_SUCCESS, {**context, "return_value": "'pong'", "runtime": 0.001})


def task_lines(caplog) -> list[tuple[str, str]]:
    return [(record.levelname, record.getMessage()) for record in caplog.records]


@pytest.fixture
def worker_log_level(caplog):
    """Set Celery's task-line loggers to a level, as `celery worker --loglevel` does."""

    def set_level(level: int) -> None:
        for name in ("celery.worker.strategy", "celery.app.trace"):
            caplog.set_level(level, logger=name)

    return set_level


def test_the_health_ping_logs_nothing_at_info(caplog, worker_log_level):
    worker_log_level(logging.INFO)
    log_task_lines(broker.PING)
    assert task_lines(caplog) == []


def test_the_health_ping_logs_its_lines_at_debug(caplog, worker_log_level):
    worker_log_level(logging.DEBUG)
    log_task_lines(broker.PING)
    assert task_lines(caplog) == [
        ("DEBUG", "Task lookout.ping[abc] received"),
        ("DEBUG", "Task lookout.ping[abc] succeeded in 0.001s: 'pong'"),
    ]


def test_other_tasks_still_log_their_lines_at_info(caplog, worker_log_level):
    worker_log_level(logging.INFO)
    log_task_lines(broker.RUN_TURN_STEP)
    assert task_lines(caplog) == [
        ("INFO", "Task lookout.run_turn_step[abc] received"),
        ("INFO", "Task lookout.run_turn_step[abc] succeeded in 0.001s: 'pong'"),
    ]
