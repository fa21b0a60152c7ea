"""The admin options and user settings schemas, both derived from the engine list."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import marshmallow
from marshmallow import fields, pre_load, validate, validates_schema

from tools.web_search.engine import SearchEngine

DEFAULT = "default"
_CREDENTIALS = ("apiKey", "baseURL")


def _keyed(engines: Sequence[SearchEngine]) -> list[str]:
    return [e.id for e in engines if e.needs_key]


def _based(engines: Sequence[SearchEngine]) -> list[str]:
    return [e.id for e in engines if e.needs_base_url]


class _Credentials(marshmallow.Schema):
    """Treats a blank key or base URL, as forms send them, as not given."""

    @pre_load
    def drop_blanks(self, data: Any, **_: Any) -> Any:
        """Return ``data`` without blank ``apiKey`` and ``baseURL`` values."""
        if not isinstance(data, dict):
            return data
        return {
            k: v
            for k, v in data.items()
            if not (k in _CREDENTIALS and (v is None or (isinstance(v, str) and not v.strip())))
        }


def _api_key(engines: Sequence[SearchEngine], description: str) -> fields.String:
    return fields.String(
        load_default=None,
        metadata={
            "title": "API key",
            "description": description,
            "secret": True,
            "show_when": {"engine": _keyed(engines)},
        },
    )


def _base_url(engines: Sequence[SearchEngine], description: str) -> fields.Url:
    return fields.Url(
        load_default=None,
        require_tld=False,
        schemes={"http", "https"},
        metadata={
            "title": "Base URL",
            "description": description,
            "show_when": {"engine": _based(engines)},
        },
    )


def _rate(engines: Sequence[SearchEngine], title: str) -> fields.Float:
    defaults = ", ".join(f"{e.name} {round(e.rate_per_second, 2):g}" for e in engines)
    return fields.Float(
        load_default=None,
        allow_none=True,
        validate=validate.Range(min=0, min_inclusive=False, max=1000),
        metadata={
            "title": title,
            "description": "How many searches a second the engine's plan allows, for all users "
            f"together. Blank: the engine's documented rate ({defaults}).",
        },
    )


def _daily_cap(title: str) -> fields.Integer:
    return fields.Integer(
        load_default=None,
        allow_none=True,
        validate=validate.Range(min=1),
        metadata={
            "title": title,
            "description": "At most this many searches a day (UTC) with this engine and key. "
            "Blank: no cap.",
        },
    )


def make_options_schema(engines: Sequence[SearchEngine]) -> type[marshmallow.Schema]:
    """Return the admin options schema for ``engines``, with their key and base URL checks."""
    by_id = {e.id: e for e in engines}

    class WebSearchOptions(_Credentials):
        engine = fields.String(
            required=True,
            validate=validate.OneOf([e.id for e in engines], labels=[e.name for e in engines]),
            metadata={"title": "Search engine", "description": "The engine searches go to."},
        )
        apiKey = _api_key(engines, "The key for the engine's API.")
        baseURL = _base_url(engines, "The address of the engine's instance.")
        rate = _rate(engines, "Searches a second")
        dailyCap = _daily_cap("Searches a day")
        adminEngineRoles = fields.List(
            fields.String(validate=validate.Length(min=1)),
            load_default=["user"],
            metadata={
                "title": "Roles that may use this engine",
                "description": "Only users holding one of these roles search with this engine "
                "and key; others need an engine of their own.",
            },
        )
        enabledByDefault = fields.Boolean(
            load_default=False,
            metadata={"title": "On by default", "description": "Offer web search to everyone."},
        )
        userToggle = fields.Boolean(
            load_default=True,
            metadata={"title": "Users may switch it", "description": "Users may turn it off."},
        )
        userEngines = fields.Boolean(
            load_default=True,
            metadata={
                "title": "Users may bring their own engine",
                "description": "Users may pick their own engine and key in their settings.",
            },
        )
        maxResults = fields.Integer(
            load_default=5,
            validate=validate.Range(min=1, max=20),
            metadata={"title": "Results per search", "description": "From 1 to 20."},
        )

        @validates_schema
        def check_credentials(self, data: dict[str, Any], **_: Any) -> None:
            """Refuse a keyed engine without a key, or a base URL engine without one."""
            engine = by_id.get(data.get("engine", ""))
            if engine is None:
                return
            errors: dict[str, list[str]] = {}
            if engine.needs_key and not data.get("apiKey"):
                errors["apiKey"] = [f"{engine.name} needs an API key."]
            if engine.needs_base_url and not data.get("baseURL"):
                errors["baseURL"] = [f"{engine.name} needs a base URL."]
            if errors:
                raise marshmallow.ValidationError(errors)

    return WebSearchOptions


def make_user_settings_schema(
    engines: Sequence[SearchEngine],
) -> Callable[[dict[str, Any]], type[marshmallow.Schema] | None]:
    """Return ``(options) -> schema``: the user settings, or None when user engines are off."""

    class WebSearchSettings(_Credentials):
        engine = fields.String(
            load_default=DEFAULT,
            validate=validate.OneOf(
                [DEFAULT, *(e.id for e in engines)],
                labels=["Default (the admin's engine)", *(e.name for e in engines)],
            ),
            metadata={"title": "Search engine"},
        )
        apiKey = _api_key(engines, "Your key for the engine's API.")
        baseURL = _base_url(engines, "The address of your engine's instance.")

    def user_settings_schema(options: dict[str, Any]) -> type[marshmallow.Schema] | None:
        return WebSearchSettings if options.get("userEngines", True) else None

    return user_settings_schema
