"""Model providers over the API: admins manage them (keys write-only); users list the models."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Blueprint, jsonify
from sqlalchemy.exc import IntegrityError

from core import broker
from core.extensions import db
from core.models import Provider
from core.models.encrypted import encrypt
from webapp import queue
from webapp.api.bodies import load_json
from webapp.api.operations import NO_CONTENT, operation
from webapp.api.schemas.providers import (
    ConnectionSettingsSchema,
    ConnectionTestSchema,
    ModelChoiceListSchema,
    ProviderAnswer,
    ProviderChange,
    ProviderListSchema,
    ProviderSchema,
)
from webapp.auth.guards import admin_required, api_login_required
from webapp.errors import ApiError

bp = Blueprint("api_providers", __name__, url_prefix="/api")


NAME_TAKEN = ("Another provider has that name.", 400, {"name": ["Already taken."]})


def apply(provider: Provider, data: dict[str, Any]) -> None:
    """Copy the checked fields onto the provider; a blank key keeps the stored one, null
    removes it (for a local server that needs none)."""
    name = data.get("name", provider.name)
    with db.session.no_autoflush:  # a rename must not be written before its name is checked
        taken = db.session.scalar(
            db.select(Provider).filter(Provider.name == name, Provider.id != provider.id)
        )
    if taken is not None:
        raise ApiError(*NAME_TAKEN)
    for field, column in (("name", "name"), ("kind", "kind"), ("baseUrl", "base_url")):
        if field in data:
            setattr(provider, column, data[field])
    if "models" in data:  # a setting left blank (null) takes its documented default
        provider.models = [
            {k: v for k, v in m.items() if v is not None and (k != "default" or v)}
            for m in data["models"]
        ]
        if any(m.get("default") for m in provider.models):
            clear_other_defaults(provider)
    if data.get("apiKey"):
        provider.api_key = data["apiKey"]
    elif "apiKey" in data and data["apiKey"] is None:  # null removes the key; blank keeps it
        provider.api_key = None


def clear_other_defaults(provider: Provider) -> None:
    """Untick Default on every other provider's models: one default model across providers,
    the one chosen last."""
    with db.session.no_autoflush:
        others = db.session.scalars(db.select(Provider).filter(Provider.id != provider.id)).all()
    for other in others:
        if any(m.get("default") for m in other.models or []):
            other.models = [
                {k: v for k, v in m.items() if k != "default"} for m in other.models or []
            ]


def save() -> None:
    """Commit; a name another request took since it was checked is the same 400."""
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        raise ApiError(*NAME_TAKEN) from None


def get_provider(provider_id: str) -> Provider:
    """Return a provider; 404 when there is none."""
    provider = db.session.get(Provider, provider_id)
    if provider is None:
        raise ApiError("There is no such provider.", 404)
    return provider


@bp.get("/admin/providers")
@admin_required
@operation(answers={200: ProviderListSchema})
def list_providers():
    """List the providers, keys left out."""
    rows = db.session.scalars(db.select(Provider).order_by(Provider.name))
    return jsonify(ProviderListSchema().dump({"providers": rows}))


@bp.post("/admin/providers")
@admin_required
@operation(body=ProviderSchema, answers={201: ProviderAnswer})
def create_provider():
    """Add a provider."""
    provider = Provider()
    apply(provider, load_json(ProviderSchema, "provider"))
    db.session.add(provider)
    save()
    return jsonify(ProviderAnswer().dump(provider)), 201


@bp.get("/admin/providers/<provider_id>")
@admin_required
@operation(answers={200: ProviderAnswer})
def read_provider(provider_id: str):
    """Return one provider, its key left out."""
    return jsonify(ProviderAnswer().dump(get_provider(provider_id)))


@bp.patch("/admin/providers/<provider_id>")
@admin_required
@operation(body=ProviderChange, answers={200: ProviderAnswer})
def change_provider(provider_id: str):
    """Change some fields of a provider."""
    provider = get_provider(provider_id)
    apply(provider, load_json(ProviderChange, "provider"))
    save()
    return jsonify(ProviderAnswer().dump(provider))


@bp.delete("/admin/providers/<provider_id>")
@admin_required
@operation(answers={204: NO_CONTENT})
def delete_provider(provider_id: str):
    """Remove a provider; turns already run keep their record."""
    db.session.delete(get_provider(provider_id))
    db.session.commit()
    return "", 204


@bp.get("/models")
@api_login_required
@operation(answers={200: ModelChoiceListSchema})
def list_models():
    """List every model of every provider as {id, provider, name, tools, default}."""
    rows = db.session.scalars(db.select(Provider).order_by(Provider.name))
    models = [
        {
            "id": f"{p.name}/{m['name']}",
            "provider": p.name,
            "name": m["name"],
            "tools": bool(m.get("tools")),
            "default": bool(m.get("default")),
        }
        for p in rows
        for m in p.models or []
    ]
    return jsonify(ModelChoiceListSchema().dump({"models": models}))


# How long the web request waits for a worker's connection test (the task gives up sooner).
TEST_TIMEOUT_SECONDS = 15.0


@bp.post("/admin/providers/test")
@admin_required
@operation(body=ConnectionSettingsSchema, answers={200: ConnectionTestSchema}, errors=(503,))
def check_new_connection():
    """Have a worker list the models of a provider not saved yet (its base URL and key as typed):
    200 {ok, models | error}; 503 when none answers."""
    data = load_json(ConnectionSettingsSchema, "provider")
    sealed = encrypt(data["apiKey"]) if data.get("apiKey") else None
    name = data["name"].strip() or "new"
    return awaited_test(
        lambda: queue.call(
            broker.PROBE_PROVIDER_SETTINGS,
            name,
            data["baseUrl"],
            sealed,
            timeout=TEST_TIMEOUT_SECONDS,
        )
    )


def awaited_test(send: Callable[[], dict[str, Any]]):
    """Return the JSON answer of the connection test ``send`` awaits from a worker; 503 when
    none answered."""
    try:
        outcome = send()
    except queue.QueueError as error:
        raise ApiError(f"{error} Check that a worker is running, then try again.", 503) from None
    return jsonify(ConnectionTestSchema().dump(outcome))


@bp.post("/admin/providers/<provider_id>/test")
@admin_required
@operation(answers={200: ConnectionTestSchema}, errors=(503,))
def check_connection(provider_id: str):
    """Have a worker list the provider's models: 200 {ok, models | error}; 503 when none answers."""
    provider_id = get_provider(provider_id).id
    return awaited_test(
        lambda: queue.call(broker.PROBE_PROVIDER, provider_id, timeout=TEST_TIMEOUT_SECONDS)
    )
