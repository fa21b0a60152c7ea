"""Builds the web_search plugin from any list of engines: options, settings, tool and catalog."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import marshmallow
import requests
from marshmallow import fields, validate

from tools.api import Plugin, PluginContext, Tool, ToolContext
from tools.usage import SEARCHES
from tools.web_search.engine import Search, SearchEngine
from tools.web_search.failover import Answer, search_with_fallback
from tools.web_search.options import make_options_schema, make_user_settings_schema
from tools.web_search.resolution import resolve_engine, resolve_fallback

DESCRIPTION = "Search the web. Returns a title, URL, and snippet for each result."
TIMEOUT_SECONDS = 20


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


def log_answer(logger: logging.Logger, answer: Answer, user: str) -> None:
    """Log which engine answered, with whose key, and whether it was the fallback (and why)."""
    engine = answer.answered.engine.id
    key = "admin" if answer.answered.admins else "user"
    first = answer.first.engine.id if answer.first is not None else None
    logger.info(
        "web_search answered engine=%s key=%s fallback_from=%s reason=%s user=%s",
        engine,
        key,
        first or "-",
        answer.reason or "-",
        user,
        extra={
            "engine": engine,
            "engine_key": key,
            "fallback_from": first,
            "fallback_reason": answer.reason,
            "user": user,
        },
    )


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
            fallback = resolve_fallback(by_id, options, tool_ctx.roles)
            search = Search(query=input["query"], count=options["maxResults"])
            answer = search_with_fallback(resolved, fallback, search, tool_ctx, plain, user_agent)
            log_answer(logger, answer, tool_ctx.user)
            tool_ctx.meter.add(SEARCHES, 1, answer.answered.engine.id)
            results = answer.results[: options["maxResults"]]
            for result in results:
                tool_ctx.cite(result.url, result.title or None)
            output: dict[str, Any] = {
                "results": [asdict(result) for result in results],
                "engine": answer.answered.engine.id,
                "engineName": answer.answered.engine.name,
            }
            if answer.first is not None:
                output["fallbackFrom"] = answer.first.engine.name
                output["fallbackReason"] = answer.first_error
            return output

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
