"""The health ping task, which proves a worker takes tasks from the queue and answers."""

from workers.celery_app import celery


@celery.task(name="lookout.ping")
def ping() -> str:
    """Return "pong"."""
    return "pong"
