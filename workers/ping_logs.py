"""Keeps the health ping's routine "Task received/succeeded" lines out of the worker's INFO log.

Every web process pings a worker every few seconds while someone asks for /healthz (./run does,
and so do load balancers), and Celery logs each task it receives and finishes at INFO. For the
ping those two lines a round filled the ./run terminal and scrolled the admin's first password
away. A filter on the two Celery loggers that write those lines turns a ping's lines into DEBUG
ones, kept only when the worker logs at DEBUG; every other task's lines stay as Celery wrote them,
and a ping that fails, retries or is discarded is still logged as Celery writes it.
"""

from __future__ import annotations

import logging

from celery.app import trace

from core import broker

# The loggers of celery/worker/strategy.py ("Task ... received") and celery/app/trace.py
# ("Task ... succeeded in ..."); both pass the task's name in a dict of formatting arguments.
TASK_LINE_LOGGERS = ("celery.worker.strategy", "celery.app.trace")
ROUTINE_LINES = frozenset({trace.LOG_RECEIVED, trace.LOG_SUCCESS})
QUIET_TASKS = frozenset({broker.PING})


class RoutinePingFilter(logging.Filter):
    """Demote a quiet task's received/succeeded lines to DEBUG, dropping them unless DEBUG is on."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Return False for a quiet task's line when its logger does not log DEBUG."""
        if record.levelno != logging.INFO or not is_quiet_task_line(record):
            return True
        if not logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
            return False
        record.levelno = logging.DEBUG
        record.levelname = logging.getLevelName(logging.DEBUG)
        return True


def is_quiet_task_line(record: logging.LogRecord) -> bool:
    """Return whether the record is Celery's received or succeeded line of one of QUIET_TASKS."""
    args = record.args
    return (
        record.msg in ROUTINE_LINES and isinstance(args, dict) and args.get("name") in QUIET_TASKS
    )


def install() -> None:
    """Attach the filter to Celery's task-line loggers once (importing twice adds no second)."""
    for name in TASK_LINE_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(known, RoutinePingFilter) for known in logger.filters):
            logger.addFilter(RoutinePingFilter())
