"""The health ping task, which proves a worker takes tasks from the queue and answers."""

from core import broker
from workers.celery_app import celery


@celery.task(name=broker.PING)
def ping() -> str:
    """Return "pong"."""
    return "pong"
