"""Builds the web_search plugin from any list of engines: options, settings, tool and catalog."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import marshmallow
import requests
from marshmallow import fields, validate

from tools.api import Plugin, PluginContext, Tool, ToolContext
from tools.web_search.engine import Search, SearchEngine
from tools.web_search.options import make_options_schema, make_user_settings_schema
from tools.web_search.pacing import bucket_name, wait_for_engine
from tools.web_search.resolution import resolve_engine
from tools.web_search.search import run_search

DESCRIPTION = "Search the web. Returns a title, URL, and snippet for each result."
TIMEOUT_SECONDS = 20
# A search waits for its engine's turn only while this much of its deadline would be left.
REQUEST_RESERVE_SECONDS = 5.0


class WebSearchInput(marshmallow.Schema):
    """The tool's input: the query."""

    query = fields.String(
        required=True,
        validate=validate.Length(min=1, max=400),
        metadata={"description": "What to search for."},
    )


def describe(engine: SearchEngine) -> str:
    """Return the tool description, listing the engine's query operators."""
    if not engine.operators:
        return DESCRIPTION
    return f"{DESCRIPTION} Supported operators: {', '.join(engine.operators)}."


def create_web_search(engines: Sequence[SearchEngine]) -> Plugin:
    """Return the web_search plugin offering ``engines``; all engine specifics come from them."""
    by_id = {engine.id: engine for engine in engines}
    if len(by_id) != len(engines):
        raise ValueError("Search engine ids must be unique.")

    def setup(ctx: PluginContext) -> None:
        options = ctx.options
        logger = ctx.logger
        user_agent = f"{ctx.app_name} (+{ctx.public_url})"
        # The admin's URLs are trusted: a plain session, deaf to proxy variables.
        plain = requests.Session()
        plain.trust_env = False

        def execute(input: dict[str, Any], tool_ctx: ToolContext) -> dict[str, Any]:
            resolved = resolve_engine(by_id, options, tool_ctx.settings, tool_ctx.roles, logger)
            search = Search(
                query=input["query"],
                count=options["maxResults"],
                api_key=resolved.api_key,
                base_url=resolved.base_url,
            )
            session = tool_ctx.fetch if resolved.users_base_url else plain
            bucket = bucket_name(resolved.engine, resolved.api_key, resolved.base_url)
            wait_for_engine(
                resolved.engine,
                resolved.limit,
                bucket,
                tool_ctx.rates,
                tool_ctx.signal,
                REQUEST_RESERVE_SECONDS,
            )
            results = run_search(resolved.engine, search, session, tool_ctx.signal, user_agent)
            results = results[: options["maxResults"]]
            for result in results:
                tool_ctx.cite(result.url, result.title or None)
            return {"results": [asdict(result) for result in results]}

        ctx.tools.register(
            Tool(
                name="web_search",
                description=describe(by_id[options["engine"]]),
                input_schema=WebSearchInput,
                execute=execute,
                default_enabled=options["enabledByDefault"],
                user_toggle=options["userToggle"],
                untrusted=True,
                timeout_seconds=TIMEOUT_SECONDS,
            )
        )

    def catalog() -> dict[str, Any]:
        return {
            "engines": [
                {
                    "id": e.id,
                    "name": e.name,
                    "needsKey": e.needs_key,
                    "needsBaseURL": e.needs_base_url,
                    "operators": list(e.operators),
                    "ratePerSecond": round(e.rate_per_second, 2),
                }
                for e in engines
            ]
        }

    return Plugin(
        id="web_search",
        options_schema=make_options_schema(engines),
        setup=setup,
        user_settings_schema=make_user_settings_schema(engines),
        catalog=catalog,
    )
