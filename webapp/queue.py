"""The one door from the web side to Celery: send tasks by name, never importing `workers`.

Errors: `QueueError` when the broker cannot be reached or an awaited task does not answer in time.
"""

from __future__ import annotations

from typing import Any

from celery import Celery
from celery.exceptions import TaskRevokedError
from celery.exceptions import TimeoutError as CeleryTimeout
from celery.result import AsyncResult
from flask import Flask, current_app
from kombu.exceptions import OperationalError

from core import broker
from core.broker import QueueError


def make_client(app: Flask) -> Celery:
    """Return a Celery client configured from the app's settings (broker, backend, queue)."""
    client = Celery("lookout-web", set_as_current=False)
    client.conf.update(
        broker.client_settings(app.config),
        # The web side fails fast, answering 503, where a worker would wait for Redis.
        broker_connection_retry_on_startup=False,
        broker_transport_options={"max_retries": 2, "interval_start": 0, "interval_step": 0.2},
        redis_socket_connect_timeout=2,
        redis_socket_timeout=5,
        result_backend_transport_options={"retry_policy": {"timeout": 2.0}},
    )
    return client


def init_queue(app: Flask) -> None:
    """Attach the Celery client to the app."""
    app.extensions["lookout_queue"] = make_client(app)
    app.extensions["lookout_queues_declared"] = set()  # queue names this process sent to


class SentTask:
    """A sent task whose result nobody here waits for: its id. Celery's ``AsyncResult`` in its
    place made a promise each send and, on each thread's first send, a result backend of the
    thread's own (its class found by reading the installed packages' entry points)."""

    __slots__ = ("id", "ignored")

    def __init__(self, task_id: str) -> None:
        self.id = task_id


def get_client() -> Celery:
    """Return the current app's Celery client."""
    return current_app.extensions["lookout_queue"]


def send(name: str, args: tuple, **options: Any) -> AsyncResult | SentTask:
    """Send the task `name` with args to the app's queue; return its result's handle (a
    ``SentTask`` when ``result_cls=SentTask`` is given).

    The queue is declared on the broker with this process's first send to it, as Celery
    declares it; later sends do not ask kombu to declare it again, which it would skip for a
    connection that had declared it, after binding a copy of the queue to the channel each
    time (a sixth of a send's CPU).
    """
    queue_name = current_app.config["CELERY_QUEUE"]
    declared = current_app.extensions["lookout_queues_declared"]
    if queue_name in declared:
        options.setdefault("declare", [])
    try:
        result = get_client().send_task(name, args=args, queue=queue_name, retry=False, **options)
    except OperationalError as error:
        raise QueueError(f"The task queue (Redis) could not be reached: {error}") from error
    declared.add(queue_name)
    return result


def enqueue(name: str, *args: Any, **options: Any) -> str:
    """Send the task `name` with args to the workers and return its task id."""
    return send(name, args, result_cls=SentTask, **options).id


def find_result(task_id: str) -> tuple[bool, Any]:
    """Return whether the task has ended and, once it has, its result (raised if it failed)."""
    result = get_client().AsyncResult(task_id)
    try:
        if not result.ready():
            return False, None
        return True, result.get(timeout=1)
    except OperationalError as error:
        raise QueueError(f"The task queue (Redis) could not be reached: {error}") from error


def call(name: str, *args: Any, timeout: float) -> Any:
    """Send the task `name` and return its result, raising QueueError when none comes in time."""
    result = send(name, args, expires=timeout)
    try:
        return result.get(timeout=timeout)
    except (CeleryTimeout, TaskRevokedError):  # a task that expired unanswered is revoked
        queue = current_app.config["CELERY_QUEUE"]
        raise QueueError(
            f"No worker answered {name} within {timeout:g} seconds. Check that a worker runs "
            f"(celery -A workers worker) with this app's REDIS_URL and CELERY_QUEUE ({queue}), "
            "and read its log."
        ) from None
    finally:
        result.forget()


def send_first_step(turn_id: str) -> str:
    """Send a stored turn's first step to the workers; return its task id."""
    # No result is stored for a step (its task ignores results), so the web does not
    # subscribe to one: Celery would otherwise SUBSCRIBE this process to every step it sends.
    # The message's display of its arguments is given, as Celery's ``saferepr`` would write it
    # for an id and a number (a tenth of the send's CPU): the message is the same.
    return enqueue(
        broker.RUN_TURN_STEP,
        turn_id,
        0,
        ignore_result=True,
        argsrepr=f"({turn_id!r}, 0)",
        kwargsrepr="{}",
    )


def revoke(task_id: str) -> None:
    """Tell the workers to drop a task that has not run yet (a cancelled turn's work)."""
    get_client().control.revoke(task_id)
