"""Builds the ToolContext of one tool call: the one place a tool's view of its turn is made."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flask import current_app

from core.extensions import get_redis
from core.models import ToolCall, Turn
from core.plugin_host import find_kept_settings
from core.quotas import UserQuotas
from core.turn.replies import cited_urls
from core.turn.sources import Sources
from core.turn.state import TurnState, turn_state
from tools.api import Citation, Signal, ToolContext
from tools.citations import CitationList
from tools.net import make_session
from tools.rates import RedisRates
from workers.offer import Offered, owner_id


def make_trial_context(user_id: str, roles: list[str], seconds: float) -> ToolContext:
    """Return the context of an admin's trial of a tool outside any turn (the plugins page's
    "Test search"): the admin's roles, no conversation, no citations kept, ``seconds`` to run."""
    return ToolContext(
        user=user_id,
        conversation="",
        roles=list(roles),
        signal=Signal.after(seconds),
        fetch=make_session(current_app.config["ALLOW_PRIVATE_NETWORKS"]),
        cite=lambda *args, **kwargs: None,
        turn_cache={},
        rates=RedisRates(get_redis()),
    )


class CallSources:
    """The reply's sources as a tool call's ``ok`` result cites into them (``Sources``): the
    turn's cited set answers what the reply cites already; the database is read only when
    Redis lost that set (``TurnState.cite``'s ``known``)."""

    def __init__(self, turn: Turn, state: TurnState) -> None:
        self.turn = turn
        self.sources = Sources(state, known=lambda: cited_urls(turn.id, turn))

    def claim_all(self, citations: Iterable[Citation]) -> list[dict[str, Any]]:
        """Return ``Sources.claim_all(citations)`` of the turn's sources."""
        return self.sources.claim_all(citations)


def make_tool_context(
    turn: Turn, call: ToolCall, offered: Offered, signal: Signal
) -> tuple[ToolContext, CallSources, CitationList]:
    """Return the context of a tool call, the reply's sources and the list ``ctx.cite``
    collects into.

    The citations are only collected here: they reach the reply with the call's ``ok`` result
    (``CallSources.claim_all``), never from a call that failed or timed out.
    """
    state = turn_state(turn.id)
    sources = CallSources(turn, state)
    citations = CitationList()
    user = owner_id(turn)
    plugin = offered.plugin  # a tool source's tools have no plugin settings
    ctx = ToolContext(
        user=user,
        conversation=turn.conversation_id,
        roles=list(turn.roles or []),
        signal=signal,
        fetch=make_session(current_app.config["ALLOW_PRIVATE_NETWORKS"]),
        cite=citations.cite,
        turn_cache=state.cache(call.name),
        settings=find_kept_settings(user, plugin) if plugin else {},
        rates=RedisRates(state.client),
        quotas=UserQuotas(state.client, user),
    )
    return ctx, sources, citations


def make_user_tool_context(
    user_id: str, roles: list[str], plugin: str | None, signal: Signal, redis_client
) -> tuple[ToolContext, CitationList]:
    """Return the context of a call made for a user outside a turn (an MCP client's), and the
    list ``ctx.cite`` collects into: the user's settings, rates and quotas as in a turn, and
    a cache of the call's own, since no turn holds it."""
    citations = CitationList()
    ctx = ToolContext(
        user=user_id,
        conversation="",
        roles=list(roles),
        signal=signal,
        fetch=make_session(current_app.config["ALLOW_PRIVATE_NETWORKS"]),
        cite=citations.cite,
        turn_cache={},
        settings=find_kept_settings(user_id, plugin) if plugin else {},
        rates=RedisRates(redis_client),
        quotas=UserQuotas(redis_client, user_id),
    )
    return ctx, citations
