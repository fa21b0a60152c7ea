"""Builds the ToolContext of one tool call: the one place a tool's view of its turn is made."""

from __future__ import annotations

from flask import current_app

from tools.api import Signal, ToolContext
from tools.citations import CitationList
from tools.net import make_session
from tools.rates import RedisRates
from webapp.models import ToolCall, Turn
from webapp.plugin_host import find_settings
from webapp.quotas import UserQuotas
from webapp.turn.replies import cited_urls
from webapp.turn.sources import Sources
from webapp.turn.state import turn_state
from workers.offer import Offered, owner_id


def make_tool_context(
    turn: Turn, call: ToolCall, offered: Offered, signal: Signal
) -> tuple[ToolContext, Sources, CitationList]:
    """Return the context of a tool call, the reply's sources and the list ``ctx.cite``
    collects into.

    The citations are only collected here: they reach the reply with the call's ``ok`` result
    (``Sources.claim_all``), never from a call that failed or timed out.
    """
    state = turn_state(turn.id)
    sources = Sources(state, cited_urls(turn.id))
    citations = sources.collector()
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
        settings=find_settings(user, plugin) if plugin else {},
        rates=RedisRates(state.client),
        quotas=UserQuotas(state.client, user),
    )
    return ctx, sources, citations
