"""What a turn's reply keeps: the results of its tool calls, and, when the turn ends before a
step stored them, the text and sources its events already showed.

A step stores its text when its stream ends, and its tool calls' results when the next step
starts. A turn that ends between those moments (a Stop, a worker that died, a step that
crashed) keeps what the user saw through ``kept_parts``, read from the stored tool calls and
from the turn's event stream, so the reply loses no word and no result.
"""

from __future__ import annotations

from typing import Any

from webapp.extensions import db
from webapp.models import ToolCall
from webapp.turn.events import SOURCE_ADDED, TEXT_DELTA, TOOL_FINISHED
from webapp.turn.parts import TOOL_RESULT, kind_of, source_urls, text_part, tool_result_part
from webapp.turn.sources import Sources
from webapp.turn.state import TurnState, turn_state

UNFINISHED_CALL = "The call did not finish."
# The events that close a step's stream: text after the last of them is the current step's.
STEP_BOUNDARIES = (TOOL_FINISHED,)


def results_of(turn_id: str, step: int, sources: Sources) -> list[dict[str, Any]]:
    """Return the tool-result and source parts of a step's tool calls, in order; a call that
    has no outcome yet is "cancelled" with UNFINISHED_CALL. Sources the reply already cites
    are left out."""
    calls = db.session.scalars(
        db.select(ToolCall).filter_by(turn_id=turn_id, step=step).order_by(ToolCall.position)
    ).all()
    parts = [
        tool_result_part(
            call.call_id,
            call.name,
            call.outcome or "cancelled",
            call.output,
            call.error or UNFINISHED_CALL,
        )
        for call in calls
    ]
    for call in calls:
        sources.replay(parts, call.citations or [])
    return parts


def with_results(
    parts: list[dict[str, Any]], turn_id: str, step: int, sources: Sources | None = None
) -> list[dict[str, Any]]:
    """Return ``parts`` with the results of a step's tool calls at the end, in place of any
    stored for them before (a step run again, or a result kept at a Stop and now known).
    ``sources``: the reply's, when the caller holds them (they then count the new ones)."""
    call_ids = set(
        db.session.scalars(db.select(ToolCall.call_id).filter_by(turn_id=turn_id, step=step))
    )
    kept = [p for p in parts if not (kind_of(p) == TOOL_RESULT and p["callId"] in call_ids)]
    if sources is None:
        sources = Sources(turn_state(turn_id), kept)
    sources.cited.update(source_urls(kept))
    return kept + results_of(turn_id, step, sources)


def step_shown(state: TurnState) -> bool:
    """Whether the page was already shown text or a source of the turn's current step."""
    return any(
        name in (TEXT_DELTA, SOURCE_ADDED)
        for _id, name, _data in state.events_since(STEP_BOUNDARIES)
    )


def kept_parts(state: TurnState, parts: list[dict[str, Any]], step: int) -> list[dict[str, Any]]:
    """Return the stored ``parts`` of a reply whose turn ends now at ``step``, with what the
    user saw of that step: its tool calls' results when it made calls, else the text and
    sources its events showed (a step stores its own only when its stream ends)."""
    has_calls = db.session.scalar(
        db.select(ToolCall.call_id).filter_by(turn_id=state.turn_id, step=step).limit(1)
    )
    if has_calls is not None:
        return with_results(parts, state.turn_id, step)
    text, shown = [], []
    for _entry_id, name, data in state.events_since(STEP_BOUNDARIES):
        if name == TEXT_DELTA:
            text.append(data.get("text", ""))
        elif name == SOURCE_ADDED:
            shown.append(data)
    kept = Sources(state, parts).replay(list(parts), shown)
    if "".join(text):
        kept.append(text_part("".join(text)))
    return kept
