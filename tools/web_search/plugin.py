"""Builds the web_search plugin from any list of engines: options, settings, tool and catalog."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import marshmallow
from marshmallow import fields, validate

from tools.api import Audience, Plugin, PluginContext, Tool, ToolContext, ToolError
from tools.usage import SEARCHES
from tools.web_search.engine import Search, SearchEngine
from tools.web_search.failover import FALLBACK_FAILED, Answer, BothFailed, search_with_fallback
from tools.web_search.options import make_options_schema, make_user_settings_schema
from tools.web_search.resolution import Resolved, resolve_engine, resolve_fallback
from tools.web_search.search import EngineFailed

DESCRIPTION = "Search the web. Returns a title, URL, and snippet for each result."
TIMEOUT_SECONDS = 20
# The role of those who can change the admin's engine (docs/plugins.md: roles).
ADMIN_ROLE = "admin"
# What follows what happened when someone who cannot change the admin's engine reads that it
# failed in a way only an administrator can fix (its key, its address, its settings).
ADMIN_CAN_FIX = "Only an administrator can fix this: tell one."


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


def audience(options: dict[str, Any], engine: SearchEngine) -> Audience:
    """Return who is offered web_search under ``options``, with the sentence that says so.

    With user engines on, everyone is offered it (a user outside adminEngineRoles searches
    with an engine of their own); with them off, only users holding a role in
    adminEngineRoles, since nobody else could search at all."""
    roles = tuple(options["adminEngineRoles"])
    which = f"the role{'s' if len(roles) > 1 else ''} {' or '.join(roles)}"
    if options["userEngines"]:
        if not roles:
            return Audience(
                None,
                f"No role may search with {engine.name}, the engine set below: every user needs "
                "an engine of their own in their web search settings.",
            )
        return Audience(
            None,
            f"Users holding {which} search with {engine.name}, the engine set below; other "
            "users need an engine of their own in their web search settings.",
        )
    if not roles:
        return Audience(
            (),
            "Nobody is offered web_search: no role may search with the engine set below, and "
            "users may not bring their own engine.",
        )
    return Audience(
        roles,
        f"Only users holding {which} are offered web_search, with {engine.name}: users may "
        "not bring their own engine, so nobody else could search.",
    )


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


def for_admin_only(resolved: Resolved, error: ToolError, roles: Sequence[str]) -> bool:
    """Whether ``error`` of the admin's engine asks for what only an administrator can do
    ("Check its address…", a rejected key) while the caller is no administrator."""
    return (
        isinstance(error, EngineFailed)
        and error.admin_only
        and resolved.admins
        and ADMIN_ROLE not in roles
    )


def told(resolved: Resolved, error: ToolError, roles: Sequence[str]) -> str:
    """Return what the caller reads of ``error``: the engine's whole sentence, or, when only an
    administrator can act on it, what happened followed by who can fix it."""
    if isinstance(error, EngineFailed) and for_admin_only(resolved, error, roles):
        return f"{error.cause} {ADMIN_CAN_FIX}"
    return error.message


def both_failed(failed: BothFailed, ctx: ToolContext, logger: logging.Logger) -> str:
    """Return the sentence of a search that the first engine and the fallback both failed, as
    the caller may read it: what each engine said, then who can fix it when only an
    administrator can (that failure logged too)."""
    roles = ctx.roles
    for resolved, error in (
        (failed.first, failed.first_error),
        (failed.fallback, failed.fallback_error),
    ):
        if for_admin_only(resolved, error, roles):
            log_cause(logger, resolved, ctx.user, error.message)
    first = failed.first_error
    first_text = first.cause if for_admin_only(failed.first, first, roles) else first.message
    fallback = failed.fallback_error
    admin_only = for_admin_only(failed.fallback, fallback, roles)
    fallback_text = (
        fallback.cause if isinstance(fallback, EngineFailed) and admin_only else fallback.message
    )
    also = FALLBACK_FAILED.format(name=failed.fallback.engine.name)
    message = f"{first_text} {also}: {fallback_text}"
    if admin_only or for_admin_only(failed.first, first, roles):
        message = f"{message} {ADMIN_CAN_FIX}"
    return message


def log_cause(logger: logging.Logger, resolved: Resolved, user: str, cause: str) -> None:
    """Log a failure of the admin's engine that only an administrator can fix."""
    logger.warning(
        "web_search failed with the admin's engine=%s user=%s: %s",
        resolved.engine.id,
        user,
        cause,
        extra={"engine": resolved.engine.id, "user": user},
    )


def fallback_reason(answer: Answer, ctx: ToolContext) -> str | None:
    """Return why the first engine did not answer, as the caller may read it."""
    if answer.first is None or answer.first_error is None:
        return None
    return told(answer.first, answer.first_error, ctx.roles)


def create_web_search(engines: Sequence[SearchEngine]) -> Plugin:
    """Return the web_search plugin offering ``engines``; all engine specifics come from them."""
    by_id = {engine.id: engine for engine in engines}
    if len(by_id) != len(engines):
        raise ValueError("Search engine ids must be unique.")

    def setup(ctx: PluginContext) -> None:
        options = ctx.options
        logger = ctx.logger
        user_agent = f"{ctx.app_name} (+{ctx.public_url})"

        def execute(input: dict[str, Any], tool_ctx: ToolContext) -> dict[str, Any]:
            resolved = resolve_engine(by_id, options, tool_ctx.settings, tool_ctx.roles, logger)
            fallback = resolve_fallback(by_id, options, tool_ctx.roles, resolved)
            search = Search(query=input["query"], count=options["maxResults"])
            try:
                answer = search_with_fallback(resolved, fallback, search, tool_ctx, user_agent)
            except BothFailed as exc:
                raise ToolError(both_failed(exc, tool_ctx, logger)) from None
            except ToolError as exc:
                if not for_admin_only(resolved, exc, tool_ctx.roles):
                    raise
                log_cause(logger, resolved, tool_ctx.user, exc.message)
                raise ToolError(told(resolved, exc, tool_ctx.roles)) from None
            log_answer(logger, answer, tool_ctx.user)
            tool_ctx.meter.add(SEARCHES, 1, answer.answered.engine.id)
            results = answer.results[: options["maxResults"]]
            for result in results:
                tool_ctx.cite(result.url, result.title or None, result.snippet or None)
            output: dict[str, Any] = {
                "results": [asdict(result) for result in results],
                "engine": answer.answered.engine.id,
                "engineName": answer.answered.engine.name,
            }
            if answer.first is not None:
                output["fallbackFrom"] = answer.first.engine.name
                output["fallbackReason"] = fallback_reason(answer, tool_ctx)
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
                audience=audience(options, by_id[options["engine"]]),
                grounding="search",
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
