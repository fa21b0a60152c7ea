"""``GET /v1/models``: every installed model, as OpenAI lists models."""

from __future__ import annotations

from flask import jsonify

from core.extensions import db
from core.models.providers import Provider
from webapp.api.operations import operation
from webapp.auth.guards import api_login_required
from webapp.openai_api.routes import bp
from webapp.openai_api.schemas import OpenAIErrorSchema, OpenAIModelListSchema


@bp.get("/models")
@api_login_required
@operation(answers={200: OpenAIModelListSchema}, error_schema=OpenAIErrorSchema)
def list_models():
    """List every model of every provider, with ids to send as ``model``: provider/model."""
    rows = db.session.scalars(db.select(Provider).order_by(Provider.name))
    models = [
        {"id": f"{p.name}/{m['name']}", "object": "model", "created": 0, "owned_by": p.name}
        for p in rows
        for m in p.models or []
    ]
    return jsonify(OpenAIModelListSchema().dump({"object": "list", "data": models}))
