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
