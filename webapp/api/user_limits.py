"""One user's own limits over the admin API: read them with their defaults, set or clear them."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, jsonify
from marshmallow import Schema, fields, validate

from core.extensions import db
from core.limits import LIMITS, MEGABYTE, overrides, set_overrides
from core.models import User
from core.quotas import remaining
from webapp.api.bodies import load_json
from webapp.api.operations import operation
from webapp.api.schemas.limits import UserLimitsSchema
from webapp.auth.guards import admin_required
from webapp.errors import ApiError

bp = Blueprint("api_user_limits", __name__, url_prefix="/api/admin/users")
LARGEST = 10_000_000  # the largest value any limit's setting takes

# A body of ``PUT .../limits``: each limit optional; a whole number sets it, null clears it.
LimitsChange = Schema.from_dict(
    {
        limit.name: fields.Integer(
            allow_none=True,
            strict=True,
            validate=validate.Range(
                min=1, max=LARGEST, error=f"A whole number from 1 to {LARGEST:,}, or empty."
            ),
            metadata={"title": limit.label},
        )
        for limit in LIMITS
    },
    name="LimitsChange",
)


def get_user(user_id: str) -> User:
    """Return the account with this id, or answer 404."""
    user = db.session.get(User, user_id)
    if user is None:
        raise ApiError("There is no such account. Reload the page to see the current list.", 404)
    return user


def show_limits(user: User) -> dict[str, Any]:
    """Return the user's limits (default, own value or None, unit) and what is used of them."""
    own = overrides(user.id)
    shown = {
        "limits": [
            {
                "limit": limit.name,
                "label": limit.label,
                "setting": limit.setting,
                "default": current_app.config[limit.setting],
                "value": own.get(limit.name),
                "unit": "MB" if limit.unit == MEGABYTE else None,
            }
            for limit in LIMITS
        ],
        "remaining": remaining(user.id),
    }
    return UserLimitsSchema().dump(shown)


@bp.get("/<user_id>/limits")
@admin_required
@operation(answers={200: UserLimitsSchema})
def read_limits(user_id: str):
    """Return one user's limits with their defaults, and what they have used."""
    return jsonify(show_limits(get_user(user_id)))


@bp.put("/<user_id>/limits")
@admin_required
@operation(body=LimitsChange, answers={200: UserLimitsSchema})
def change_limits(user_id: str):
    """Set (a whole number) or clear (null, back to the default) some of one user's limits;
    limits not named stay as they are."""
    user = get_user(user_id)
    set_overrides(user.id, load_json(LimitsChange, "limits"))
    db.session.commit()
    return jsonify(show_limits(user))
