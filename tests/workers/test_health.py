"""The worker process: configuration, and the ping task answered through the real queue."""

import re

import pytest
from celery import Celery

import celeryconfig
from core import broker
from core.config import load_settings
from webapp import queue
from workers import celery


def test_the_worker_acknowledges_late_and_one_task_at_a_time():
    assert celeryconfig.task_acks_late is True
    assert celeryconfig.task_reject_on_worker_lost is True
    assert celeryconfig.worker_prefetch_multiplier == 1
    assert celeryconfig.task_serializer == "json"


def test_redis_redelivers_only_after_twice_the_longest_task():
    timeout = celeryconfig.broker_transport_options["visibility_timeout"]
    assert timeout >= 2 * celeryconfig.TASK_HARD_LIMIT_SECONDS


def test_the_web_side_and_the_workers_share_one_set_of_client_settings(app):
    web = queue.make_client(app)
    shared = broker.client_settings(app.config)
    assert {name: web.conf[name] for name in shared} == shared
    worker_shared = broker.client_settings(load_settings())
    assert {name: celery.conf[name] for name in worker_shared} == worker_shared
    assert web.conf.task_serializer == celery.conf.task_serializer == "json"
    assert web.conf.accept_content == celery.conf.accept_content == ["json"]


def test_a_plain_redis_broker_uses_the_kept_client_transport_and_tls_keeps_kombus_own():
    def transport_of(url: str) -> type:
        client = Celery("check", set_as_current=False)
        client.conf.update(broker.client_settings({"REDIS_URL": url, "CELERY_QUEUE": "q"}))
        with client.connection_for_write() as connection:
            return connection.get_transport_cls()

    assert transport_of("redis://127.0.0.1:6379/0") is broker.RedisTransport
    tls = transport_of("rediss://127.0.0.1:6379/0")
    assert tls is not broker.RedisTransport and tls.__module__ == "kombu.transport.redis"


def test_the_ping_task_is_registered_under_its_public_name():
    celery.loader.import_default_modules()
    assert "lookout.ping" in celery.tasks


def test_the_workers_register_every_task_name_the_web_side_sends():
    celery.loader.import_default_modules()
    registered = {
        name for name, task in celery.tasks.items() if task.__module__.startswith("workers.")
    }
    assert registered == set(broker.TASK_NAMES)


@pytest.mark.integration
def test_a_real_worker_answers_the_ping_by_task_name(app, celery_worker):
    with app.app_context():
        assert queue.call(broker.PING, timeout=5) == "pong"


def test_tasks_run_inside_the_flask_app_context(app, monkeypatch):
    from flask import current_app

    from workers import celery_app

    monkeypatch.setattr(celery_app, "_flask_app", app)

    @celery.task(name="lookout.test.app_name")
    def app_name():
        return current_app.config["CELERY_QUEUE"]

    assert app_name() == app.config["CELERY_QUEUE"]


@pytest.mark.integration
def test_a_worker_on_another_queue_does_not_steal_the_ping(make_app, tmp_path):
    from tests.support.workers import CeleryWorker

    serving = make_app()
    other = make_app()
    with CeleryWorker(serving, tmp_path):
        with other.app_context(), pytest.raises(queue.QueueError, match="No worker answered"):
            queue.call(broker.PING, timeout=1)


@pytest.mark.integration
def test_a_real_workers_log_at_info_keeps_the_routine_pings_out(app, celery_worker):
    """Regression: every health ping wrote two INFO lines, which buried ./run's first password."""
    with app.app_context():
        for _ in range(3):
            assert queue.call(broker.PING, timeout=5) == "pong"
    log = celery_worker.log.read_text()
    assert "ready." in log
    # An expired ping sent before the worker started is still reported as discarded: that is
    # news (nobody answered it), not routine.
    assert re.findall(r"Task lookout\.ping\[\S+\] (?:received|succeeded)", log) == []
