"""GET /metrics: the series of core/metrics.py in Prometheus' text format, for operators only.

Metrics tell how busy Lookout is and which models and tools people use, so they are off until
an operator opens them: a scraper sends ``METRICS_TOKEN`` as a bearer token, or scrapes from an
address inside ``METRICS_ALLOW``. With neither set the address answers 404, as if it did not
exist; a caller that fits neither answers 403. Both answers carry the one JSON error shape.
The address is read as every other check reads it (``webapp.security.client_address``: the
client's as TRUSTED_PROXIES proxies report it); a request forwarded by a proxy Lookout was not
told to trust comes from an unknown client, and no network lets it in.

The queue is read when scraped (one indexed count, one LLEN), so it is always current and costs
nothing between scrapes.
"""

from __future__ import annotations

import hmac
import ipaddress
from datetime import datetime

import redis
from flask import Blueprint, Flask, Response, current_app, request
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from sqlalchemy import func
from sqlalchemy.exc import SQLAlchemyError

from core.extensions import db, get_redis
from core.models import Turn
from core.models.base import aware, utcnow
from webapp.errors import json_error
from webapp.security import client_address, forwarded_by_untrusted_proxy

bp = Blueprint("metrics", __name__)

METRICS_OFF = (
    "Metrics are switched off. An operator turns them on by setting METRICS_TOKEN or METRICS_ALLOW."
)
METRICS_REFUSED = (
    "This address may not read the metrics. Send the metrics token as "
    "'Authorization: Bearer <token>', or scrape from an address listed in METRICS_ALLOW."
)


class QueueCollector:
    """The queue as it is at scrape time: queued turns, the oldest one's age, and the tasks
    waiting in the broker's list."""

    def __init__(self, queue_name: str, client: redis.Redis) -> None:
        self.queue_name = queue_name
        self.client = client

    def collect(self):
        """Yield the queue's gauges; a part that cannot be read is left out, not reported 0."""
        try:
            count, oldest = db.session.execute(
                db.select(func.count(), func.min(Turn.created_at)).where(Turn.status == "queued")
            ).one()
        except SQLAlchemyError:
            db.session.rollback()
        else:
            yield GaugeMetricFamily("lookout_turns_queued", "Turns waiting for a worker.", count)
            yield GaugeMetricFamily(
                "lookout_oldest_queued_turn_age_seconds",
                "Seconds the oldest turn still waiting for a worker has waited (0: none waits).",
                age_seconds(oldest),
            )
        try:
            length = self.client.llen(self.queue_name)
        except redis.RedisError:
            return
        yield GaugeMetricFamily(
            "lookout_task_queue_length", "Tasks waiting in the broker's queue.", length
        )


def age_seconds(since: datetime | None) -> float:
    """Return the seconds since ``since``, 0 for None."""
    if since is None:
        return 0.0
    return max(0.0, (utcnow() - aware(since)).total_seconds())


def allowed(config) -> bool | None:
    """Return whether this request may read the metrics; None when metrics are off."""
    token, networks = config.get("METRICS_TOKEN"), config.get("METRICS_ALLOW") or []
    if not token and not networks:
        return None
    header = request.headers.get("Authorization", "")
    if token and header.startswith("Bearer "):
        if hmac.compare_digest(header[len("Bearer ") :].strip().encode(), token.encode()):
            return True
    if forwarded_by_untrusted_proxy():
        return False
    try:
        address = ipaddress.ip_address(client_address())
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(network) for network in networks)


@bp.get("/metrics")
def show_metrics():
    """Answer the metrics in Prometheus' text format, to a scraper that may read them."""
    config = current_app.config
    verdict = allowed(config)
    if verdict is None:
        return json_error(METRICS_OFF, 404)
    if not verdict:
        return json_error(METRICS_REFUSED, 403)
    scraped = CollectorRegistry(auto_describe=False)
    scraped.register(QueueCollector(config["CELERY_QUEUE"], get_redis()))
    if config.get("PROMETHEUS_MULTIPROC_DIR"):
        counted = CollectorRegistry()
        MultiProcessCollector(counted, path=config["PROMETHEUS_MULTIPROC_DIR"])
    else:
        counted = REGISTRY  # one process (the development server, tests): its own values
    body = generate_latest(counted) + generate_latest(scraped)
    return Response(body, content_type=CONTENT_TYPE_LATEST)


def init_metrics(app: Flask) -> None:
    """Serve /metrics (the core app counts the plugins' events: ``metrics.count_plugin_events``)."""
    app.register_blueprint(bp)
