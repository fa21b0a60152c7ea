"""The admin options and user settings schemas, both derived from the engine list."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import marshmallow
from marshmallow import fields, pre_load, validate, validates_schema

from tools.settings import header_safe_key
from tools.web_search.engine import SearchEngine

DEFAULT = "default"
NO_FALLBACK = "none"
_CREDENTIALS = ("apiKey", "baseURL", "fallbackApiKey", "fallbackBaseURL")
# Said at save time to a user who picks the admin's engine while holding no role in
# adminEngineRoles: they would learn it only when a search failed.
ADMINS_ENGINE_CLOSED = (
    "The admin's engine is not open to your account. Pick an engine of your own and enter its "
    "key, or ask an administrator to let you use theirs."
)

# Said at save time where a key holds a character an HTTP header cannot carry.
ENGINE_KEY = header_safe_key("the engine's page")


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


def _api_key(
    engines: Sequence[SearchEngine], description: str, title: str = "API key", on: str = "engine"
) -> fields.String:
    return fields.String(
        load_default=None,
        validate=ENGINE_KEY,
        metadata={
            "title": title,
            "description": description,
            "secret": True,
            "show_when": {on: _keyed(engines)},
        },
    )


def _base_url(
    engines: Sequence[SearchEngine], description: str, title: str = "Base URL", on: str = "engine"
) -> fields.Url:
    return fields.Url(
        load_default=None,
        require_tld=False,
        schemes={"http", "https"},
        metadata={
            "title": title,
            "description": description,
            "show_when": {on: _based(engines)},
        },
    )


def _rate(
    engines: Sequence[SearchEngine], title: str, whose: str = "engine", **shown: Any
) -> fields.Float:
    defaults = ", ".join(f"{e.name} {round(e.rate_per_second, 2):g}" for e in engines)
    return fields.Float(
        load_default=None,
        allow_none=True,
        validate=validate.Range(min=0, min_inclusive=False, max=1000),
        metadata={
            "title": title,
            "description": f"How many searches a second the {whose}'s plan allows, for all "
            f"users together. Blank: the {whose}'s documented rate ({defaults}).",
            **shown,
        },
    )


def _daily_cap(title: str, whose: str = "engine", **shown: Any) -> fields.Integer:
    return fields.Integer(
        load_default=None,
        allow_none=True,
        validate=validate.Range(min=1),
        metadata={
            "title": title,
            "description": f"At most this many searches a day (UTC) with the {whose} and its "
            "key. Blank: no cap.",
            **shown,
        },
    )


def _fallback_engine(engines: Sequence[SearchEngine]) -> fields.String:
    return fields.String(
        load_default=NO_FALLBACK,
        validate=validate.OneOf(
            [NO_FALLBACK, *(e.id for e in engines)],
            labels=["No fallback", *(e.name for e in engines)],
        ),
        metadata={
            "title": "Fallback engine",
            "description": "Searches go here when the engine is rate-limited, blocked or down. "
            "It serves the same roles as the engine.",
        },
    )


def _credential_errors(
    engine: SearchEngine, data: dict[str, Any], prefix: str, advice: str = ""
) -> dict:
    errors: dict[str, list[str]] = {}
    key, base_url = ("fallbackApiKey", "fallbackBaseURL") if prefix else ("apiKey", "baseURL")
    if engine.needs_key and not data.get(key):
        errors[key] = [f"{engine.name} needs an API key.{advice}"]
    if engine.needs_base_url and not data.get(base_url):
        errors[base_url] = [f"{engine.name} needs a base URL.{advice}"]
    return errors


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
        fallbackEngine = _fallback_engine(engines)
        fallbackApiKey = _api_key(
            engines, "The key for the fallback engine's API.", "Fallback key", "fallbackEngine"
        )
        fallbackBaseURL = _base_url(
            engines,
            "The address of the fallback engine's instance.",
            "Fallback address",
            "fallbackEngine",
        )
        fallbackRate = _rate(
            engines, "Fallback's rate", "fallback engine", show_when={"fallbackEngine": list(by_id)}
        )
        fallbackDailyCap = _daily_cap(
            "Fallback's daily cap", "fallback engine", show_when={"fallbackEngine": list(by_id)}
        )
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
            metadata={
                "title": "On by default",
                "description": "Offer web search to everyone. Unticked, it stays off until a "
                "user switches it on in Settings.",
            },
        )
        userToggle = fields.Boolean(
            load_default=True,
            metadata={
                "title": "Users may switch it",
                "description": "Users may turn it on or off in their Settings.",
            },
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
            """Refuse a keyed engine without a key, or a base URL engine without one (the
            fallback's too), and a fallback that is the engine again with the same credentials."""
            engine = by_id.get(data.get("engine", ""))
            fallback = by_id.get(data.get("fallbackEngine", ""))
            errors: dict[str, list[str]] = {}
            if engine is not None:
                errors.update(_credential_errors(engine, data, ""))
            if fallback is not None:
                errors.update(_credential_errors(fallback, data, "fallback"))
            if engine is not None and engine is fallback and not errors:
                same_key = not engine.needs_key or data["apiKey"] == data["fallbackApiKey"]
                same_url = not engine.needs_base_url or data["baseURL"] == data["fallbackBaseURL"]
                if same_key and same_url:
                    errors["fallbackEngine"] = [
                        "The fallback is the engine itself with the same credentials; pick "
                        "another engine, or give it another key or base URL."
                    ]
            if errors:
                raise marshmallow.ValidationError(errors)

    return WebSearchOptions


def make_user_settings_schema(
    engines: Sequence[SearchEngine],
) -> Callable[[dict[str, Any], Sequence[str]], type[marshmallow.Schema] | None]:
    """Return ``(options, roles) -> schema``: the user settings of a user holding ``roles``, or
    None when user engines are off.

    The schema refuses, at save time rather than as a failed search later, an engine of the
    user's own without the key or base URL it needs, and the admin's engine ("default") for a
    user holding no role in adminEngineRoles. The admin's engine may leave the key and base URL
    blank only for a user who may use the admin's, since the admin's values fill them (see
    resolution.py).
    """
    by_id = {e.id: e for e in engines}

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

        admins_engine: str | None = None
        may_use_admins: bool = True

        @validates_schema
        def check_credentials(self, data: dict[str, Any], **_: Any) -> None:
            """Refuse the admin's engine to a user who may not use it, and an engine other than
            the admin's without the key or base URL it needs."""
            if data.get("engine") == DEFAULT and not self.may_use_admins:
                raise marshmallow.ValidationError({"engine": [ADMINS_ENGINE_CLOSED]})
            engine = by_id.get(data.get("engine", ""))
            if engine is None or (engine.id == self.admins_engine and self.may_use_admins):
                return
            errors = _credential_errors(engine, data, "", " Enter yours, or pick another engine.")
            if errors:
                raise marshmallow.ValidationError(errors)

    # Built once for each admin engine and access to it, not once a request.
    schemas: dict[tuple[str | None, bool], type[marshmallow.Schema]] = {}

    def user_settings_schema(
        options: dict[str, Any], roles: Sequence[str]
    ) -> type[marshmallow.Schema] | None:
        if not options.get("userEngines", True):
            return None
        admins = options.get("engine")
        may_use_admins = any(role in options.get("adminEngineRoles", ()) for role in roles)
        if (admins, may_use_admins) not in schemas:
            schemas[(admins, may_use_admins)] = type(
                "WebSearchSettings",
                (WebSearchSettings,),
                {"admins_engine": admins, "may_use_admins": may_use_admins},
            )
        return schemas[(admins, may_use_admins)]

    return user_settings_schema
