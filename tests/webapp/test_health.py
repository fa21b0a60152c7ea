"""GET /healthz: database, Redis and a real round trip through a worker."""

import pytest

from tests.support.redis_server import RedisServer

pytestmark = pytest.mark.integration


def test_healthz_is_green_through_a_real_worker(client, celery_worker):
    response = client.get("/healthz")
    assert response.status_code == 200, response.get_json()
    assert response.get_json() == {
        "ok": True,
        "checks": {"database": {"ok": True}, "redis": {"ok": True}, "worker": {"ok": True}},
    }


def test_healthz_names_the_worker_when_none_runs(client):
    response = client.get("/healthz")
    assert response.status_code == 503
    checks = response.get_json()["checks"]
    assert checks["database"] == {"ok": True}
    assert checks["redis"] == {"ok": True}
    assert checks["worker"]["ok"] is False
    assert "No worker answered" in checks["worker"]["error"]


def test_healthz_names_redis_when_redis_is_stopped(make_app):
    server = RedisServer().start()
    app = make_app(REDIS_URL=server.url)
    client = app.test_client()
    server.stop()
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.get_json()
    assert body["ok"] is False
    assert body["checks"]["database"] == {"ok": True}
    assert body["checks"]["redis"]["ok"] is False
    assert "Redis did not answer" in body["checks"]["redis"]["error"]
    assert body["checks"]["worker"]["ok"] is False


def test_healthz_names_the_database_when_it_cannot_be_read(make_app, tmp_path):
    app = make_app(DATABASE_URL=f"sqlite:///{tmp_path}/missing-dir/none.db")
    body = app.test_client().get("/healthz").get_json()
    assert body["checks"]["database"]["ok"] is False
    assert body["checks"]["database"]["error"].startswith("The database did not answer")
