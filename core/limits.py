"""The limits one user has on a shared server: each one's default setting and a user's own value.

Every limit is one ``Limit`` in ``LIMITS``: its setting in ``core/config.py`` holds the
default, and an admin may set another value for one user (a ``UserLimit`` row, from the Users
page or ``PUT /api/users/<id>/limits``). Where a limit is counted (Redis windows, the database)
is ``core/quotas.py``'s business; this module only says how much each user is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app

from core.extensions import db
from core.kept import find_kept, watch
from core.models import UserLimit

MEGABYTE = 1_000_000
# Raised (INCR) after every commit that wrote a user's own value, in whichever process wrote it.
VERSION_KEY = "lookout:limits:version"


@dataclass(frozen=True)
class Limit:
    """One limit: its API name, the setting of its default, its label, its counting window
    (``hour`` or ``day`` in UTC, or None for a count of what is open or stored now) and how
    many counted units one unit of the setting is (bytes per megabyte)."""

    name: str
    setting: str
    label: str
    window: str | None
    unit: int = 1


LIMITS: tuple[Limit, ...] = (
    Limit("openTurns", "QUOTA_OPEN_TURNS", "Answers running at once", None),
    Limit("turnsPerHour", "QUOTA_TURNS_PER_HOUR", "Messages per hour", "hour"),
    Limit("toolCallsPerTurn", "QUOTA_TOOL_CALLS_PER_TURN", "Tool calls per answer", None),
    Limit("toolCallsPerStep", "TOOL_CALLS_PER_STEP", "Tool calls per model step", None),
    Limit("searchesPerDay", "QUOTA_SEARCHES_PER_DAY", "Web searches per day", "day"),
    Limit(
        "fetchBytesPerDay", "QUOTA_FETCH_MB_PER_DAY", "Megabytes fetched per day", "day", MEGABYTE
    ),
    Limit("eventStreams", "QUOTA_EVENT_STREAMS", "Event streams open at once", None),
    Limit("mcpCalls", "QUOTA_MCP_CALLS", "Tool calls from programs (MCP) running at once", None),
    Limit("uploadBytes", "QUOTA_UPLOAD_MB", "Megabytes of attachments stored", None, MEGABYTE),
    Limit("uploadsPerHour", "QUOTA_UPLOADS_PER_HOUR", "Files uploaded per hour", "hour"),
)
LIMITS_BY_NAME = {limit.name: limit for limit in LIMITS}


def get_limit(name: str) -> Limit:
    """Return the limit called ``name``; KeyError for an unknown one."""
    return LIMITS_BY_NAME[name]


def overrides(user_id: str) -> dict[str, int]:
    """Return the values an admin set for this user, by limit name, in the setting's unit."""
    by_setting = {limit.setting: limit.name for limit in LIMITS}
    rows = db.session.scalars(db.select(UserLimit).filter_by(user_id=user_id))
    return {by_setting[row.setting]: row.value for row in rows if row.setting in by_setting}


def kept_overrides(user_id: str) -> dict[str, int]:
    """Return ``overrides(user_id)``, read once per process until any process commits a
    change to any user's own values (one Redis GET of ``VERSION_KEY`` a use): a tool call's
    quotas and a step's call limits read them every time, an admin rarely changes them."""
    return find_kept(VERSION_KEY, user_id, lambda: overrides(user_id))


def setting_value(user_id: str, name: str) -> int:
    """Return the user's value of a limit in its setting's unit: theirs, or the default."""
    limit = get_limit(name)
    row = db.session.get(UserLimit, (user_id, limit.setting))
    return row.value if row is not None else current_app.config[limit.setting]


def setting_values(user_id: str, names: tuple[str, ...]) -> dict[str, int]:
    """Return the user's values of the limits named, in their settings' units, read in one
    query, or none while no user's own values changed (a step that stores tool calls checks
    two, a tool call's quotas two)."""
    own = kept_overrides(user_id)
    return {name: own.get(name, current_app.config[get_limit(name).setting]) for name in names}


def allowed(user_id: str, name: str) -> int:
    """Return how much the user is allowed of a limit, in counted units (bytes, not MB)."""
    return setting_value(user_id, name) * get_limit(name).unit


def own_value(user_id: str, name: str):
    """Return a scalar subquery of the user's own value of a limit (NULL when an admin set
    none), so that a check reads it in the same query as what it counts."""
    return (
        db.select(UserLimit.value)
        .where(UserLimit.user_id == user_id, UserLimit.setting == get_limit(name).setting)
        .scalar_subquery()
    )


def allowance(name: str, own: int | None) -> int:
    """Return how much a user is allowed of a limit, in counted units, given their own value
    (``own_value``'s answer; None: the setting's default)."""
    limit = get_limit(name)
    return (current_app.config[limit.setting] if own is None else own) * limit.unit


def allowances(user_id: str, names: tuple[str, ...]) -> dict[str, int]:
    """Return how much the user is allowed of each limit named, in counted units, read in one
    query (a message's start checks two)."""
    values = setting_values(user_id, names)
    return {name: values[name] * get_limit(name).unit for name in names}


def set_overrides(user_id: str, values: dict[str, int | None]) -> None:
    """Set (a whole number of at least 1) or clear (None) the user's own values, by limit name;
    uncommitted. The caller has checked the names and values."""
    for name, value in values.items():
        limit = get_limit(name)
        row = db.session.get(UserLimit, (user_id, limit.setting))
        if value is None:
            if row is not None:
                db.session.delete(row)
        elif row is None:
            db.session.add(UserLimit(user_id=user_id, setting=limit.setting, value=value))
        else:
            row.value = value


watch(UserLimit, VERSION_KEY)
