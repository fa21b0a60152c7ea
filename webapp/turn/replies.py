"""What a reply shows and keeps, derived in one place from what happened: the output each model
step stored (``TurnStep``) and the turn's tool calls (``ToolCall``).

    record_step    a step's own output, stored with its calls or its ending (one transaction)
    reply_parts    the reply's parts, in order, derived from those records
    write_reply    the one writer of ``Message.parts``
    cited_urls     the one answer to "what does this turn cite"
    source_numbers the one answer to "which number has each source"

Step by step, the reply reads: the sources the model cited, its text, the tool calls it asked
for and, once the step is over (the next step claimed it, or the turn ended), each call's
result (a call without an outcome reads "cancelled": ``UNFINISHED_CALL``) followed by the
sources its result cites. A source shows once, where it is first cited, and is numbered in that
order (the Sources row's); each result lists the numbers of the sources it cites, for the model
to cite them. Once the turn ended, each text's ``[n]`` markers are checked against what the
turn read (``webapp.turn.checks``). The one special case
is ``shown``: what the page was shown of a step cut off mid-stream before it stored its output
(a Stop, a worker that died, a step that crashed), read from the turn's events
(``shown_output``). A step run twice, or a result that arrives after a Stop, derives the reply
again: nothing is merged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import update

from webapp.extensions import db
from webapp.models import Message, ToolCall, Turn, TurnStep
from webapp.turn.checks import checked_parts
from webapp.turn.events import SOURCE_ADDED, TEXT_DELTA, TOOL_FINISHED
from webapp.turn.parts import (
    Part,
    source_part,
    text_part,
    tool_call_part,
    tool_result_part,
)
from webapp.turn.state import TurnState

UNFINISHED_CALL = "The call did not finish."
# The events that close a step's stream: text after the last of them is the current step's.
STEP_BOUNDARIES = (TOOL_FINISHED,)


@dataclass(frozen=True)
class StepOutput:
    """What one model step said: its text, and the sources the model cited (``{url, title}``)."""

    text: str = ""
    sources: list[Mapping[str, Any]] = field(default_factory=list)


def record_step(turn_id: str, step: int, output: StepOutput) -> None:
    """Store a step's output, in place of any an earlier run of the step stored (uncommitted:
    committed with the step's calls or with its ending)."""
    db.session.merge(
        TurnStep(
            turn_id=turn_id,
            step=step,
            text=output.text,
            sources=[{"url": s["url"], "title": s.get("title")} for s in output.sources],
        )
    )


def reply_parts(turn_id: str, shown: StepOutput | None = None) -> list[Part]:
    """Return the parts of a turn's reply, derived from its step records and tool calls;
    ``shown``: what the page showed of the turn's current step, used when that step stored
    neither its output nor calls."""
    return _derive(turn_id, shown).parts


def source_numbers(turn_id: str) -> dict[str, int]:
    """Return the number of each source the turn's reply cites, by URL: 1, 2, … in the order
    of first citation, the Sources row's."""
    return _derive(turn_id).numbers


def _derive(turn_id: str, shown: StepOutput | None = None) -> _Reply:
    status, current = db.session.execute(
        db.select(Turn.status, Turn.step).filter_by(id=turn_id)
    ).one()
    records = {
        r.step: r for r in db.session.scalars(db.select(TurnStep).filter_by(turn_id=turn_id))
    }
    calls: dict[int, list[ToolCall]] = {}
    for call in db.session.scalars(
        db.select(ToolCall).filter_by(turn_id=turn_id).order_by(ToolCall.step, ToolCall.position)
    ):
        calls.setdefault(call.step, []).append(call)
    reply = _Reply()
    ended = status not in ("queued", "running")
    for step in range(max([current, *records, *calls]) + 1):
        said = records.get(step)
        if said is not None:
            reply.say(said.text, said.sources)
        elif shown is not None and step == current and step not in calls:
            reply.say(shown.text, shown.sources)
        step_calls = calls.get(step, [])
        reply.parts.extend(tool_call_part(c.call_id, c.name, c.input) for c in step_calls)
        if step_calls and (ended or step < current):
            reply.add_results(step_calls)
    if ended:
        reply.parts = checked_parts(reply.parts, reply.answered, reply.numbers)
    return reply


class _Reply:
    """The parts of a reply as they are derived, its sources' numbers by URL, and the calls
    whose results it shows."""

    def __init__(self) -> None:
        self.parts: list[Part] = []
        self.numbers: dict[str, int] = {}
        self.answered: list[ToolCall] = []

    def say(self, text: str, sources: Iterable[Mapping[str, Any]]) -> None:
        self.parts.extend(self.cite(sources))
        if text:
            self.parts.append(text_part(text))

    def cite(self, sources: Iterable[Mapping[str, Any]]) -> list[Part]:
        """Number the sources not cited yet; return their parts."""
        new = []
        for source in sources:
            if source["url"] not in self.numbers:
                self.numbers[source["url"]] = len(self.numbers) + 1
                new.append(
                    source_part(source["url"], source.get("title"), self.numbers[source["url"]])
                )
        return new

    def add_results(self, calls: list[ToolCall]) -> None:
        cited = [self.cite(call.citations or []) for call in calls]
        self.parts.extend(
            tool_result_part(
                c.call_id,
                c.name,
                c.outcome or "cancelled",
                c.output,
                c.error or UNFINISHED_CALL,
                [self.numbers[s["url"]] for s in c.citations or []],
            )
            for c in calls
        )
        for new in cited:
            self.parts.extend(new)
        self.answered.extend(calls)


def write_reply(
    turn_id: str, shown: StepOutput | None = None, status: str | None = None
) -> list[Part] | None:
    """Set the stored reply's parts to ``reply_parts`` (and its status, when given); return
    them, None for a turn without a reply yet (uncommitted: committed with what follows)."""
    message_id = db.session.scalar(db.select(Turn.assistant_message_id).filter_by(id=turn_id))
    if message_id is None:
        return None
    parts = reply_parts(turn_id, shown)
    values: dict[str, Any] = {"parts": parts}
    if status is not None:
        values["status"] = status
    db.session.execute(
        update(Message)
        .where(Message.id == message_id)
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    return parts


def cited_urls(turn_id: str) -> set[str]:
    """Return every URL the turn cites: the model's sources of each step, and the sources of
    each tool call's result, shown in the reply yet or not."""
    cited = {
        s["url"]
        for sources in db.session.scalars(db.select(TurnStep.sources).filter_by(turn_id=turn_id))
        for s in sources or []
    }
    calls = db.session.scalars(db.select(ToolCall.citations).filter_by(turn_id=turn_id))
    cited.update(c["url"] for citations in calls for c in citations or [])
    return cited


def shown_output(state: TurnState) -> StepOutput:
    """Return the text and sources the page was shown of the turn's current step."""
    text, sources = [], []
    for _entry_id, name, data in state.events_since(STEP_BOUNDARIES):
        if name == TEXT_DELTA:
            text.append(data.get("text", ""))
        elif name == SOURCE_ADDED:
            sources.append(data)
    return StepOutput("".join(text), sources)


def step_shown(state: TurnState) -> bool:
    """Whether the page was already shown text or a source of the turn's current step."""
    return any(
        name in (TEXT_DELTA, SOURCE_ADDED)
        for _id, name, _data in state.events_since(STEP_BOUNDARIES)
    )
