"""What a turn's ending writes of its reply, worked out before the ending writes anything.

``prepare_ending`` derives the reply as the ending leaves it (``core.turn.replies``: the ending
step's output held in memory, the status the turn ends with) and so checks its citations
(``core.turn.checks``) while no write lock is held; ``core.turn.lifecycle.finish_turn`` then
writes it. ``noted_error`` is the error a failure ends with, saying what the reply kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.turn.parts import TEXT, Part, kind_of
from core.turn.replies import Records, StepOutput, derive_reply, shown_output
from core.turn.state import turn_state

CUT_OFF = "The answer above was cut off."
# A failed reply that kept only tool calls and their results: no answer text to call cut off.
NO_ANSWER_TEXT = "No answer was written: the model stopped after its tool calls, kept above."


@dataclass(frozen=True)
class Ending:
    """What a turn's ending writes of its reply: the output stored as its current step's (None
    to keep the step's record), and the reply's parts and grounding derived with it."""

    step: int
    output: StepOutput | None
    parts: list[Part]
    grounding: dict[str, Any] | None


def prepare_ending(records: Records, status: str, output: StepOutput | None) -> Ending:
    """Return what ending the turn of ``records`` with ``status`` writes of its reply (reads
    only: the page's events, when the step was cut off mid-stream)."""
    turn = records.turn
    if output is None and not turn.calls.get(turn.step):  # cut off mid-stream
        # Stored as the step's output: a continuation derives the reply again from it.
        output = shown_output(turn_state(turn.turn_id))
    parts, grounding = derive_reply(records.ending(status, output))
    return Ending(turn.step, output, parts, grounding)


def noted_error(status: str, error: str | None, parts: list[Part] | None) -> str | None:
    """Return the error a turn ends with: a failure that keeps parts says what it kept."""
    if status == "failed" and parts and error:
        return f"{kept_note(parts)} {error}"
    return error


def kept_note(parts: list[dict[str, Any]]) -> str:
    """The sentence before the error of a failed reply that keeps ``parts``: CUT_OFF when they
    hold answer text, else NO_ANSWER_TEXT."""
    wrote = any(kind_of(p) == TEXT and str(p.get("text", "")).strip() for p in parts)
    return CUT_OFF if wrote else NO_ANSWER_TEXT
