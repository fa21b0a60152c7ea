"""The events of a turn's stream: their names, one publisher per event, and the page's copy.

Every event a turn publishes is named here once (DESIGN.md, "Turn events"), and only the
publishers below build their payloads. The page scripts read the same names from
``webapp/static/turn_events.js``, written by ``page_script`` (``python -m core.turn.events``);
a test keeps the file equal to what this module would write.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.turn.state import TurnState

TURN_STARTED = "turn.started"
TEXT_DELTA = "text.delta"
REASONING_DELTA = "reasoning.delta"
TOOL_STARTED = "tool.started"
TOOL_FINISHED = "tool.finished"
SOURCE_ADDED = "source.added"
TURN_COMPLETED = "turn.completed"
TURN_FAILED = "turn.failed"
TURN_CANCELLED = "turn.cancelled"
# The event that ends the stream, by the status the turn ended with.
ENDINGS = {"completed": TURN_COMPLETED, "failed": TURN_FAILED, "cancelled": TURN_CANCELLED}
TERMINAL_EVENTS = tuple(ENDINGS.values())
# Events within a turn, in the order a page first sees them.
PROGRESS_EVENTS = (
    TURN_STARTED, REASONING_DELTA, TEXT_DELTA, TOOL_STARTED, TOOL_FINISHED, SOURCE_ADDED
)  # fmt: skip
# Sent to one reader, never stored in the turn's stream: this reader's stream was closed to keep
# its user within QUOTA_EVENT_STREAMS (the turn goes on; the page follows it again when focused).
STREAM_CLOSED = "stream.closed"
NAMES = PROGRESS_EVENTS + TERMINAL_EVENTS + (STREAM_CLOSED,)
# The page's copy lives with the web app's static files.
PAGE_SCRIPT = Path(__file__).resolve().parents[2] / "webapp" / "static" / "turn_events.js"


def ending_event(status: str) -> str:
    """Return the event that ends a turn ended with ``status`` (any but completed or failed is a
    cancellation)."""
    return ENDINGS.get(status, TURN_CANCELLED)


def turn_started(state: TurnState, assistant_message_id: str) -> None:
    """Publish that the turn's reply exists and the model is answering."""
    state.publish(*started_event(assistant_message_id))


def started_event(assistant_message_id: str) -> tuple[str, dict[str, Any]]:
    """Return ``turn_started``'s event and data, for a publish batched with others."""
    return TURN_STARTED, {"assistantMessageId": assistant_message_id}


def text_delta(state: TurnState, text: str) -> None:
    """Publish text the model streamed."""
    state.publish(*text_event(text))


def text_event(text: str) -> tuple[str, dict[str, Any]]:
    """Return ``text_delta``'s event and data, for a publish batched with others."""
    return TEXT_DELTA, {"text": text}


def reasoning_delta(state: TurnState, text: str) -> None:
    """Publish reasoning the model streamed (shown folded, never as the answer)."""
    state.publish(*reasoning_event(text))


def reasoning_event(text: str) -> tuple[str, dict[str, Any]]:
    """Return ``reasoning_delta``'s event and data, for a publish batched with others."""
    return REASONING_DELTA, {"text": text}


def tool_started_event(call_id: str, name: str, input: Any) -> tuple[str, dict[str, Any]]:
    """Return the event and data that a tool call started with ``input``, for the round trip
    that reads the turn's cancel flags (``workers.steps.read_flags``)."""
    return TOOL_STARTED, {"callId": call_id, "name": name, "input": input}


def tool_finished(
    state: TurnState, call_id: str, name: str, outcome: str, output: Any, error: str | None
) -> None:
    """Publish a tool call's outcome with its error, or with its output when it has no error."""
    data: dict[str, Any] = {"callId": call_id, "name": name, "outcome": outcome}
    if error:
        data["error"] = error
    else:
        data["output"] = output
    state.publish(TOOL_FINISHED, data)


def source_data(url: str, title: str | None) -> dict[str, Any]:
    """Return the data of ``SOURCE_ADDED`` for a source the reply cites, which
    ``TurnState.cite`` publishes as it claims the URL (``core.turn.sources``)."""
    return {"url": url, "title": title}


def turn_ended(state: TurnState, status: str, error: str | None = None) -> None:
    """Publish the event that ends the turn's stream, with the error when there is one."""
    state.publish(*ending(status, error))


def ending(status: str, error: str | None = None) -> tuple[str, dict[str, Any]]:
    """Return the event that ends the turn's stream and its data, for ``TurnState.end`` to
    append in the same round trip as the ending."""
    return ending_event(status), {"error": error} if error else {}


def stream_closed(allowed: int) -> dict[str, Any]:
    """Return the data of ``STREAM_CLOSED``: the sentence saying why and what comes next."""
    return {
        "message": f"You have {allowed} pages or programs following answers, the most one "
        "person may have, so this one stopped for the newest. It follows again when you come "
        "back to it."
    }


def page_script() -> str:
    """Return the text of ``PAGE_SCRIPT``: the event names for the page scripts."""
    names: dict[str, Any] = {
        constant: value
        for constant, value in globals().items()
        if isinstance(value, str) and value in NAMES
    }
    names["PROGRESS"] = list(PROGRESS_EVENTS)
    names["ENDINGS"] = {event: status for status, event in ENDINGS.items()}
    return (
        "/* The names of a turn's events, written by `python -m core.turn.events` from\n"
        " * core/turn/events.py; a test keeps the two equal. Do not edit by hand.\n"
        " */\n"
        f"window.LookoutTurnEvents = {json.dumps(names, indent=2)};\n"
    )


if __name__ == "__main__":
    PAGE_SCRIPT.write_text(page_script(), encoding="utf-8")
