"""GET /healthz: whether the database, Redis and a worker (a real round trip) all answer."""

from __future__ import annotations

import redis
from flask import Blueprint, current_app, jsonify
from sqlalchemy import text

from webapp import broker, queue
from webapp.extensions import db

bp = Blueprint("health", __name__)

PING_TIMEOUT_SECONDS = 2.0


def check_database() -> dict:
    """Return whether a trivial query succeeds."""
    try:
        db.session.execute(text("SELECT 1"))
    except Exception as error:  # any driver error means unhealthy, and is reported
        db.session.rollback()
        return {"ok": False, "error": f"The database did not answer: {error}"}
    return {"ok": True}


def check_redis() -> dict:
    """Return whether Redis answers PING."""
    client = redis.Redis.from_url(
        current_app.config["REDIS_URL"], socket_connect_timeout=1, socket_timeout=1
    )
    try:
        client.ping()
    except redis.RedisError as error:
        return {"ok": False, "error": f"Redis did not answer: {error}"}
    finally:
        client.close()
    return {"ok": True}


def check_worker(redis_ok: bool) -> dict:
    """Return whether a worker answers the ping task within the timeout."""
    if not redis_ok:
        return {"ok": False, "error": "No worker can be reached while Redis is down."}
    try:
        answer = queue.call(broker.PING, timeout=PING_TIMEOUT_SECONDS)
    except queue.QueueError as error:
        return {"ok": False, "error": str(error)}
    if answer != "pong":
        return {"ok": False, "error": f"The worker answered {answer!r} instead of 'pong'."}
    return {"ok": True}


@bp.get("/healthz")
def healthz():
    """Answer 200 when every check passes, 503 naming the failing checks otherwise."""
    checks = {"database": check_database(), "redis": check_redis()}
    checks["worker"] = check_worker(checks["redis"]["ok"])
    ok = all(check["ok"] for check in checks.values())
    return jsonify({"ok": ok, "checks": checks}), 200 if ok else 503
