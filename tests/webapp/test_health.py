"""GET /healthz from the background check's status, and the admins' details at /admin/health."""

import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis
import requests
from sqlalchemy import event

from core.extensions import db
from tests.support.live_server import LiveServer
from tests.support.redis_server import RedisServer
from tests.support.workers import CeleryWorker
from webapp import health

pytestmark = pytest.mark.integration

ALL_DOWN_BUT_THE_DATABASE = {
    "ok": False,
    "checks": {"database": {"ok": True}, "redis": {"ok": False}, "worker": {"ok": False}},
}


@pytest.fixture
def admin(signed_in_client):
    """A client signed in as an admin."""
    return signed_in_client("root", admin=True)


def test_healthz_is_green_through_a_real_worker(client, celery_worker):
    response = client.get("/healthz")
    assert response.status_code == 200, response.get_json()
    assert response.get_json() == {
        "ok": True,
        "checks": {"database": {"ok": True}, "redis": {"ok": True}, "worker": {"ok": True}},
    }


def test_healthz_names_the_worker_when_none_runs_and_admins_see_why(app, client, admin):
    """The reason said no worker answered, and nothing of where to look."""
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.get_json() == {
        "ok": False,
        "checks": {"database": {"ok": True}, "redis": {"ok": True}, "worker": {"ok": False}},
    }
    details = admin.get("/api/admin/health")
    assert details.status_code == 503
    worker = details.get_json()["checks"]["worker"]
    assert worker["ok"] is False
    assert worker["error"] == (
        "No worker answered lookout.ping within 2 seconds. Check that a worker runs "
        "(celery -A workers worker) with this app's REDIS_URL and CELERY_QUEUE "
        f"({app.config['CELERY_QUEUE']}), and read its log."
    )


def test_healthz_names_redis_when_redis_is_stopped_without_its_address(make_app):
    server = RedisServer().start()
    app = make_app(REDIS_URL=server.url)
    client = app.test_client()
    server.stop()
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.get_json() == ALL_DOWN_BUT_THE_DATABASE
    assert str(server.port) not in response.get_data(as_text=True)
    with app.test_request_context():
        details, ok = health.health_details()
    assert not ok
    assert "Redis did not answer" in details["checks"]["redis"]["error"]
    assert str(server.port) in details["checks"]["redis"]["error"]


def test_healthz_names_the_database_without_its_location(make_app, tmp_path):
    app = make_app(DATABASE_URL=f"sqlite:///{tmp_path}/missing-dir/none.db")
    response = app.test_client().get("/healthz")
    assert response.get_json()["checks"]["database"] == {"ok": False}
    assert "missing-dir" not in response.get_data(as_text=True)
    assert "did not answer" not in response.get_data(as_text=True)
    with app.test_request_context():
        details, _ = health.health_details()
    assert details["checks"]["database"]["error"].startswith("The database did not answer")


def test_the_details_are_for_admins_only(client, signed_in_client, admin):
    assert client.get("/api/admin/health").status_code == 401
    assert client.get("/admin/health").headers["Location"].startswith("/sign-in")
    user = signed_in_client("alice")
    assert user.get("/api/admin/health").status_code == 403
    assert user.get("/admin/health").status_code == 403
    page = admin.get("/admin/health").get_data(as_text=True)
    assert "Some parts are down" in page
    assert "No worker answered" in page
    assert 'href="/admin/health"' in admin.get("/admin/").get_data(as_text=True)


def test_a_check_that_stopped_refreshing_counts_as_down(app, client, monkeypatch):
    monkeypatch.setattr(health, "PING_TIMEOUT_SECONDS", 0.2)
    assert client.get("/healthz").get_json()["checks"]["database"] == {"ok": True}
    stuck = threading.Event()
    real_check = health.check_database

    def hang():
        stuck.wait(30)
        return real_check()

    monkeypatch.setattr(health, "check_database", hang)
    monkeypatch.setattr(health, "CHECK_INTERVAL_SECONDS", 0.05)
    monkeypatch.setattr(health, "STALE_AFTER_SECONDS", 0.5)
    try:
        time.sleep(1.0)  # the checker is now stuck in a round, past the staleness limit
        body = client.get("/healthz").get_json()
        assert body["ok"] is False
        assert body["checks"]["database"] == {"ok": False}
        with app.test_request_context():
            details, _ = health.health_details()
        assert "the health check itself is stuck" in details["checks"]["database"]["error"]
    finally:
        stuck.set()
        with app.app_context():
            health.get_monitor().stop()


def test_a_hundred_concurrent_probes_are_answered_from_the_cached_status(make_app, tmp_path):
    """100 requests at once open no Redis or database connection and run no check of their own.

    Prints the p95 latency recorded in docs/reliability.md (not asserted).
    """
    server = RedisServer().start()
    try:
        app = make_app(REDIS_URL=server.url)
        with CeleryWorker(app, tmp_path), LiveServer(app) as web:
            assert requests.get(f"{web.url}/healthz", timeout=10).status_code == 200
            with app.app_context():
                monitor, engine = health.get_monitor(), db.engine
            opened, checkouts = [], []
            event.listen(engine, "connect", lambda *args: opened.append(1))
            event.listen(engine, "checkout", lambda *args: checkouts.append(1))
            counter = redis.Redis.from_url(server.url)
            before = counter.info("stats")["total_connections_received"]
            rounds = monitor.rounds

            def probe(_):
                started = time.perf_counter()
                response = requests.get(f"{web.url}/healthz", timeout=30)
                return response.status_code, response.json(), time.perf_counter() - started

            with ThreadPoolExecutor(max_workers=100) as pool:
                answers = list(pool.map(probe, range(100)))
            new_redis = counter.info("stats")["total_connections_received"] - before
            ran = monitor.rounds - rounds
            monitor.stop()
    finally:
        server.stop()
    assert {status for status, _, _ in answers} == {200}
    assert all(body["ok"] for _, body, _ in answers)
    assert ran <= 1  # at most the checker's own round, whatever the number of requests
    assert new_redis <= 2  # none per request (the old /healthz opened one each)
    assert opened == []
    assert len(checkouts) <= ran  # only the checker's own round reads the database
    latencies = sorted(seconds for _, _, seconds in answers)
    p95 = statistics.quantiles(latencies, n=20)[-1]
    print(
        f"/healthz, 100 concurrent: p50 {statistics.median(latencies) * 1000:.1f} ms, "
        f"p95 {p95 * 1000:.1f} ms"
    )
