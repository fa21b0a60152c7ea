"""Builds the web_search plugin from any list of engines: options, settings, tool and catalog."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import marshmallow
import requests
from marshmallow import fields, validate

from tools.api import Plugin, PluginContext, Tool, ToolContext, ToolError
from tools.usage import SEARCHES
from tools.web_search.engine import Search, SearchEngine
from tools.web_search.failover import (
    FALLBACK_FAILED,
    Answer,
    BothFailed,
    QuotaSpent,
    failure_reason,
    search_with_fallback,
)
from tools.web_search.options import make_options_schema, make_user_settings_schema
from tools.web_search.resolution import Resolved, resolve_engine, resolve_fallback

DESCRIPTION = "Search the web. Returns a title, URL, and snippet for each result."
TIMEOUT_SECONDS = 20
# The role of those who can change the admin's engine (docs/plugins.md: roles).
ADMIN_ROLE = "admin"
# What someone who cannot change the admin's engine reads when it fails: its own sentence
# ("Check its address…") asks for what only an administrator can do.
SITE_ENGINE_FAILED = (
    "The site's search engine ({name}) failed, so web search does not work for now. Tell an "
    "administrator; the cause is in the server's log."
)
# The same, after the fallback engine answered: the search card reads "3 results from
# DuckDuckGo, the fallback: SearXNG failed."
SITE_ENGINE_FAILED_BRIEFLY = "{name} failed."
# The same, when the fallback failed too: each engine in its own words where the caller may
# read them ("Brave's rate limit was reached."), else in these (and failover.FALLBACK_FAILED).
BOTH_FAILED_FIRST = "The site's search engine ({name}) failed."
TELL_AN_ADMINISTRATOR = "Tell an administrator; the cause is in the server's log."


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


def hides_cause(resolved: Resolved, roles: Sequence[str], reason: str) -> bool:
    """Whether the caller reads only that the admin's engine failed, not the engine's words:
    they ask for what only an administrator can do ("Check its address…"), and the caller is
    no administrator. A rate limit says itself when to try again, so it is told as it is."""
    return resolved.admins and ADMIN_ROLE not in roles and reason != "rate-limited"


def hides_failure(resolved: Resolved, error: ToolError, roles: Sequence[str]) -> bool:
    """Whether the caller reads only that ``resolved`` failed, not ``error``'s words (see
    ``hides_cause``); a used-up daily quota is the caller's own, and always told."""
    return not isinstance(error, QuotaSpent) and hides_cause(resolved, roles, failure_reason(error))


def both_failed(failed: BothFailed, ctx: ToolContext, logger: logging.Logger) -> str:
    """Return the sentence of a search that the first engine and the fallback both failed, as
    the caller may read it: each engine's words, or only that it failed (its words logged)."""
    first_hidden = hides_failure(failed.first, failed.first_error, ctx.roles)
    fallback_hidden = hides_failure(failed.fallback, failed.fallback_error, ctx.roles)
    if not (first_hidden or fallback_hidden):
        return failed.message
    if first_hidden:
        log_cause(logger, failed.first, ctx.user, failed.first_error.message)
        first = BOTH_FAILED_FIRST.format(name=failed.first.engine.name)
    else:
        first = failed.first_error.message
    fallback = FALLBACK_FAILED.format(name=failed.fallback.engine.name)
    if fallback_hidden:
        log_cause(logger, failed.fallback, ctx.user, failed.fallback_error.message)
        return f"{first} {fallback}. {TELL_AN_ADMINISTRATOR}"
    return f"{first} {fallback}: {failed.fallback_error.message} {TELL_AN_ADMINISTRATOR}"


def log_cause(logger: logging.Logger, resolved: Resolved, user: str, cause: str) -> None:
    """Log the engine's words that the caller was not shown."""
    logger.warning(
        "web_search failed with the admin's engine=%s user=%s: %s",
        resolved.engine.id,
        user,
        cause,
        extra={"engine": resolved.engine.id, "user": user},
    )


def fallback_reason(answer: Answer, ctx: ToolContext, logger: logging.Logger) -> str | None:
    """Return why the first engine did not answer, as the caller may read it."""
    first = answer.first
    if first is None or not hides_cause(first, ctx.roles, answer.reason or "error"):
        return answer.first_error
    log_cause(logger, first, ctx.user, answer.first_error or "")
    return SITE_ENGINE_FAILED_BRIEFLY.format(name=first.engine.name)


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
            try:
                answer = search_with_fallback(
                    resolved, fallback, search, tool_ctx, plain, user_agent
                )
            except QuotaSpent:
                raise  # the user's own quota, not a failure of the engine
            except BothFailed as exc:
                raise ToolError(both_failed(exc, tool_ctx, logger)) from None
            except ToolError as exc:
                if not hides_failure(resolved, exc, tool_ctx.roles):
                    raise
                log_cause(logger, resolved, tool_ctx.user, exc.message)
                raise ToolError(SITE_ENGINE_FAILED.format(name=resolved.engine.name)) from None
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
                output["fallbackReason"] = fallback_reason(answer, tool_ctx, logger)
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
