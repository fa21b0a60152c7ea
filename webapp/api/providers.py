"""Model providers over the API: admins manage them (keys write-only); users list the models."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify
from marshmallow import Schema, ValidationError, fields, validate, validates

from webapp import broker, queue
from webapp.api.bodies import load_json
from webapp.auth.guards import admin_required, api_login_required
from webapp.errors import ApiError
from webapp.extensions import db
from webapp.models import Provider

bp = Blueprint("api_providers", __name__, url_prefix="/api")
KINDS = ["openai-compatible"]


class ModelSchema(Schema):
    """One model of a provider and whether it can use tools."""

    name = fields.String(
        required=True, validate=validate.Length(min=1, max=200), metadata={"title": "Model name"}
    )
    tools = fields.Boolean(load_default=True, metadata={"title": "Tools"})


class ProviderSchema(Schema):
    """The body of creating or changing a provider."""

    name = fields.String(
        required=True, validate=validate.Length(min=1, max=100), metadata={"title": "Name"}
    )
    kind = fields.String(
        load_default="openai-compatible",
        validate=validate.OneOf(KINDS),
        metadata={"title": "Kind"},
    )
    baseUrl = fields.Url(
        required=True,
        schemes={"http", "https"},
        require_tld=False,
        metadata={"title": "Base URL"},
    )
    apiKey = fields.String(allow_none=True, metadata={"secret": True, "title": "API key"})
    models = fields.List(
        fields.Nested(ModelSchema), load_default=list, metadata={"title": "Models"}
    )

    @validates("name")
    def no_slash(self, value: str, **_: Any) -> None:
        """Provider names may not contain "/": model ids split at the first one."""
        if "/" in value:
            raise ValidationError('A provider name may not contain "/".')


def show_provider(provider: Provider) -> dict[str, Any]:
    """Return a provider without its key."""
    return {
        "id": provider.id,
        "name": provider.name,
        "kind": provider.kind,
        "baseUrl": provider.base_url,
        "keySet": bool(provider.api_key),
        "models": provider.models,
    }


def load_body(partial: bool) -> dict[str, Any]:
    """Return the checked provider in the body; 400 with per-field messages otherwise."""
    return load_json(ProviderSchema, "provider", partial=partial)


def apply(provider: Provider, data: dict[str, Any]) -> None:
    """Copy the checked fields onto the provider; a blank key keeps the stored one, null
    removes it (for a local server that needs none)."""
    for field, column in (("name", "name"), ("kind", "kind"), ("baseUrl", "base_url")):
        if field in data:
            setattr(provider, column, data[field])
    if "models" in data:
        provider.models = [dict(m) for m in data["models"]]
    if data.get("apiKey"):
        provider.api_key = data["apiKey"]
    elif "apiKey" in data and data["apiKey"] is None:  # null removes the key; blank keeps it
        provider.api_key = None
    taken = db.session.scalar(
        db.select(Provider).filter(Provider.name == provider.name, Provider.id != provider.id)
    )
    if taken is not None:
        raise ApiError("Another provider has that name.", 400, {"name": ["Already taken."]})


def find_provider(provider_id: str) -> Provider:
    """Return a provider; 404 when there is none."""
    provider = db.session.get(Provider, provider_id)
    if provider is None:
        raise ApiError("There is no such provider.", 404)
    return provider


@bp.get("/admin/providers")
@admin_required
def list_providers():
    """List the providers, keys left out."""
    rows = db.session.scalars(db.select(Provider).order_by(Provider.name))
    return jsonify({"providers": [show_provider(p) for p in rows]})


@bp.post("/admin/providers")
@admin_required
def create_provider():
    """Add a provider."""
    provider = Provider()
    apply(provider, load_body(partial=False))
    db.session.add(provider)
    db.session.commit()
    return jsonify(show_provider(provider)), 201


@bp.get("/admin/providers/<provider_id>")
@admin_required
def read_provider(provider_id: str):
    """Return one provider, its key left out."""
    return jsonify(show_provider(find_provider(provider_id)))


@bp.patch("/admin/providers/<provider_id>")
@admin_required
def change_provider(provider_id: str):
    """Change some fields of a provider."""
    provider = find_provider(provider_id)
    apply(provider, load_body(partial=True))
    db.session.commit()
    return jsonify(show_provider(provider))


@bp.delete("/admin/providers/<provider_id>")
@admin_required
def delete_provider(provider_id: str):
    """Remove a provider; turns already run keep their record."""
    db.session.delete(find_provider(provider_id))
    db.session.commit()
    return "", 204


@bp.get("/models")
@api_login_required
def list_models():
    """List every model of every provider as {id, provider, name, tools}."""
    rows = db.session.scalars(db.select(Provider).order_by(Provider.name))
    models = [
        {
            "id": f"{p.name}/{m['name']}",
            "provider": p.name,
            "name": m["name"],
            "tools": bool(m.get("tools")),
        }
        for p in rows
        for m in p.models or []
    ]
    return jsonify({"models": models})


# How long the web request waits for a worker's connection test (the task gives up sooner).
TEST_TIMEOUT_SECONDS = 15.0


@bp.post("/admin/providers/<provider_id>/test")
@admin_required
def check_connection(provider_id: str):
    """Have a worker list the provider's models: 200 {ok, models | error}; 503 when none answers."""
    provider = find_provider(provider_id)
    try:
        outcome = queue.call(broker.PROBE_PROVIDER, provider.id, timeout=TEST_TIMEOUT_SECONDS)
    except queue.QueueError as error:
        raise ApiError(f"{error} Check that a worker is running, then try again.", 503) from None
    return jsonify(outcome)
