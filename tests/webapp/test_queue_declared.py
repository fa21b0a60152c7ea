"""The web's sends declare the task queue on the broker as Celery declares it (with a process's
first send to it), and every message reaches the queue."""

from __future__ import annotations

import redis

from core import broker
from webapp import queue


def binding(app) -> set[bytes]:
    client = redis.Redis.from_url(app.config["REDIS_URL"])
    name = app.config["CELERY_QUEUE"]
    members = client.smembers(f"_kombu.binding.{name}")
    client.close()
    return members


def test_the_first_send_declares_the_queue_and_every_send_arrives(make_app):
    app = make_app()
    name = app.config["CELERY_QUEUE"]
    client = redis.Redis.from_url(app.config["REDIS_URL"])
    assert binding(app) == set()
    with app.app_context():
        for _ in range(3):
            queue.enqueue(broker.PING)
    declared = binding(app)
    assert [member.split(b"\x06\x16")[-1] for member in declared] == [name.encode()]
    assert client.llen(name) == 3

    other = make_app(CELERY_QUEUE=name)  # another web process on the same queue
    with other.app_context():
        queue.enqueue(broker.PING)
    assert binding(other) == declared
    assert client.llen(name) == 4
    client.close()


def test_a_send_after_redis_lost_its_data_still_reaches_the_queue(make_app):
    """Redis here keeps nothing on disk: a restart loses kombu's binding of the queue, which
    the web declares only with its first send. Celery publishes a task for a direct queue to
    the default exchange (the queue's name as its routing key), which needs no binding, so
    the next send reaches the queue all the same."""
    app = make_app()
    name = app.config["CELERY_QUEUE"]
    client = redis.Redis.from_url(app.config["REDIS_URL"])
    with app.app_context():
        queue.enqueue(broker.PING)
    client.flushdb()  # what a restart without persistence leaves: no binding, no queue
    client.client_kill_filter(_type="normal", skipme=True)  # the web's connections drop
    sent = 0
    with app.app_context():
        for _ in range(3):  # a send on the dropped connection may fail: the next one connects
            try:
                queue.enqueue(broker.PING)
                sent += 1
                break
            except queue.QueueError:
                continue
    assert binding(app) == set()  # not declared again
    assert sent == 1 and client.llen(name) == 1
    client.close()
