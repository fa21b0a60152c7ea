"""Builds the ToolContext of one tool call: the one place a tool's view of its turn is made."""

from __future__ import annotations

from flask import current_app

from tools.api import Signal, ToolContext
from tools.citations import CitationList
from tools.net import make_session
from tools.rates import RedisRates
from webapp.extensions import db
from webapp.models import Message, ToolCall, Turn
from webapp.plugins import find_settings
from webapp.turn_parts import source_urls
from webapp.turns import turn_state
from workers.selection import Offered
from workers.turn_tools import owner_id


def cited_urls(turn: Turn, include_calls: bool = True) -> set[str]:
    """Return the URLs the reply already cites: its source parts and (optionally) the citations
    of tool calls whose results are not in the reply yet."""
    urls: set[str] = set()
    if turn.assistant_message_id:
        urls = source_urls(db.session.get(Message, turn.assistant_message_id).parts)
    if not include_calls:
        return urls
    calls = db.session.scalars(db.select(ToolCall).filter_by(turn_id=turn.id))
    return urls | {c["url"] for call in calls for c in (call.citations or [])}


def make_tool_context(
    turn: Turn, call: ToolCall, offered: Offered, signal: Signal
) -> tuple[ToolContext, CitationList]:
    """Return the context of a tool call and the citations it collects.

    The citations are only collected here: they reach the reply with the call's ``ok`` result
    (``workers.toolcalls.publish_citations``), never from a call that failed or timed out.
    """
    state = turn_state(turn.id)
    citations = CitationList(seen=cited_urls(turn))
    user = owner_id(turn)
    plugin = offered.plugin if offered.plugin and not offered.plugin.startswith("source:") else None
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
    )
    return ctx, citations
