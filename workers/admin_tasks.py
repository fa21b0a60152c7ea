"""Tasks the admin area awaits: testing a provider's connection by listing its models.

The web side never calls a model itself (DESIGN.md): `POST /api/admin/providers/<id>/test`
sends `broker.PROBE_PROVIDER` through webapp/queue.py and waits a few seconds for the answer.
"""

from __future__ import annotations

import logging
from typing import Any

from webapp import broker
from webapp.extensions import db
from webapp.models import Provider
from workers.celery_app import celery
from workers.providers import OpenAICompatibleProvider, ProviderError

log = logging.getLogger(__name__)

# Below the web request's wait (15 s), so a slow provider is reported as slow, not as no worker.
TEST_TIMEOUT_SECONDS = 8.0
TEST_CONNECT_TIMEOUT_SECONDS = 4.0


def check_provider(provider: Provider) -> dict[str, Any]:
    """Return {"ok": True, "models": [...]} or {"ok": False, "error": sentence}; never the key."""
    client = OpenAICompatibleProvider(
        name=provider.name,
        base_url=provider.base_url,
        api_key=provider.api_key or "",
        timeout=TEST_TIMEOUT_SECONDS,
        connect_timeout=TEST_CONNECT_TIMEOUT_SECONDS,
        max_retries=0,
    )
    with client:
        try:
            models = client.list_models()
        except ProviderError as error:
            return {"ok": False, "error": error.message}
    return {"ok": True, "models": sorted(models)}


@celery.task(name=broker.PROBE_PROVIDER)
def probe_provider(provider_id: str) -> dict[str, Any]:
    """Return the outcome of listing the models of the stored provider `provider_id`."""
    provider = db.session.get(Provider, provider_id)
    if provider is None:
        return {"ok": False, "error": "There is no such provider. Reload the page."}
    outcome = check_provider(provider)
    log.info(
        "provider connection test: provider=%s ok=%s models=%d",
        provider.name,
        outcome["ok"],
        len(outcome.get("models", [])),
    )
    return outcome
