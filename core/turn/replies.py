"""What a reply shows and keeps, derived in one place from what happened: the output each model
step stored (``TurnStep``) and the turn's tool calls (``ToolCall``).

    record_step    a step's own output, stored with its calls or its ending (one transaction)
    reply_parts    the reply's parts, in order, derived from those records
    write_reply    the one writer of ``Message.parts`` (and of ``Message.grounding``)
    cited_urls     the one answer to "what does this turn's reply cite"
    source_numbers the one answer to "which number has each source"

Step by step, the reply reads: the sources the model cited, its reasoning, its text, the tool
calls it asked for and, once the step is over (the next step claimed it, or the turn ended),
each call's result (a call without an outcome reads "cancelled": ``UNFINISHED_CALL``) followed
by the sources its result cites. A source shows once, where it is first cited, and is numbered
in that order (the Sources row's); each result lists the numbers of the sources it cites, for
the model to cite them. Once the turn ended, each text's ``[n]`` markers are checked against
what the turn read (``core.turn.checks``). A completed
reply ends with the follow-up questions its last step offered, when it did. Beside the parts,
an ended reply says how it used the web (``core.turn.grounding``). A step cut off mid-stream
before it stored its output (a Stop, a worker that died, a step that crashed) has what the
page was shown of it, read from the turn's events (``shown_output``), stored as its output by
the turn's ending. A step run twice, or a result that arrives after a Stop, derives the reply
again: nothing is merged. A continued reply is derived turn after turn, the continuation's
text going on in the last text part (core/turn/continuation.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import update

from core.extensions import db
from core.models import Message, ToolCall, Turn, TurnStep
from core.turn.checks import checked_parts
from core.turn.events import REASONING_DELTA, SOURCE_ADDED, TEXT_DELTA, TOOL_FINISHED
from core.turn.grounding import grounding_of, without_the_web
from core.turn.parts import (
    TEXT,
    Part,
    follow_ups_part,
    kind_of,
    reasoning_part,
    source_part,
    text_part,
    tool_call_part,
    tool_result_part,
)
from core.turn.state import TurnState
from core.turn.states import OPEN_STATUSES

UNFINISHED_CALL = "The call did not finish."
# The events that close a step's stream: text after the last of them is the current step's.
STEP_BOUNDARIES = (TOOL_FINISHED,)


@dataclass(frozen=True)
class StepOutput:
    """What one model step said: its text, the sources the model cited (``{url, title}``), what
    it reasoned first, and (the turn's last step) the follow-up questions it offered."""

    text: str = ""
    sources: list[Mapping[str, Any]] = field(default_factory=list)
    reasoning: str = ""
    follow_ups: list[str] | None = None


def record_step(turn_id: str, step: int, output: StepOutput) -> None:
    """Store a step's output, in place of any an earlier run of the step stored (uncommitted:
    committed with the step's calls or with its ending)."""
    db.session.merge(
        TurnStep(
            turn_id=turn_id,
            step=step,
            text=output.text,
            sources=[{"url": s["url"], "title": s.get("title")} for s in output.sources],
            reasoning=output.reasoning,
            follow_ups=output.follow_ups,
        )
    )


def reply_parts(turn_id: str, at: tuple[str, int] | None = None) -> list[Part]:
    """Return the parts of a turn's reply, derived from its step records and tool calls, after
    those of the earlier turns that wrote into the same reply (a continued reply); ``at``: the
    turn's status and step, when the caller read them."""
    return derive_reply(turn_id, at)[0]


def derive_reply(
    turn_id: str, at: tuple[str, int] | None = None
) -> tuple[list[Part], dict[str, Any] | None]:
    """Return the parts of a turn's reply (see ``reply_parts``) and, once the turn has ended,
    how it used the web (``core.turn.grounding``; None while it runs)."""
    reply, status, last = _derive_turns(turn_id, at)
    if status in OPEN_STATUSES:
        return reply.parts, None
    reply.parts = checked_parts(reply.parts, reply.answered, reply.numbers)
    if status == "completed" and last is not None and last.follow_ups:
        reply.parts.append(follow_ups_part(last.follow_ups))
    grounding = grounding_of(reply.answered)
    if grounding is None and status == "completed":
        grounding = without_the_web()
    return reply.parts, grounding


def source_numbers(turn_id: str) -> dict[str, int]:
    """Return the number of each source the turn's reply cites, by URL: 1, 2, … in the order
    of first citation, the Sources row's."""
    return _derive_turns(turn_id)[0].numbers


def _derive_turns(
    turn_id: str, at: tuple[str, int] | None = None
) -> tuple[_Reply, str, TurnStep | None]:
    """Derive the reply of every turn that wrote it; return it with this turn's status and
    last step record."""
    reply = _Reply()
    for earlier in earlier_turn_ids(turn_id):
        _derive(reply, earlier)
    status, last = _derive(reply, turn_id, at)
    return reply, status, last


def earlier_turn_ids(turn_id: str) -> list[str]:
    """Return the turns that wrote into this turn's reply before it, oldest first: none unless
    the turn continues a reply (core/turn/continuation.py)."""
    turn = db.session.execute(
        db.select(Turn.assistant_message_id, Turn.created_at).filter_by(id=turn_id)
    ).one()
    if turn.assistant_message_id is None:
        return []
    return list(
        db.session.scalars(
            db.select(Turn.id)
            .filter(
                Turn.assistant_message_id == turn.assistant_message_id,
                Turn.created_at < turn.created_at,
            )
            .order_by(Turn.created_at)
        )
    )


def _derive(
    reply: _Reply, turn_id: str, at: tuple[str, int] | None = None
) -> tuple[str, TurnStep | None]:
    """Add one turn's steps to ``reply``; return the turn's status and its last step record."""
    status, current = (
        at or db.session.execute(db.select(Turn.status, Turn.step).filter_by(id=turn_id)).one()
    )
    records = {
        r.step: r for r in db.session.scalars(db.select(TurnStep).filter_by(turn_id=turn_id))
    }
    calls: dict[int, list[ToolCall]] = {}
    for call in db.session.scalars(
        db.select(ToolCall).filter_by(turn_id=turn_id).order_by(ToolCall.step, ToolCall.position)
    ):
        calls.setdefault(call.step, []).append(call)
    for step in range(max([current, *records, *calls]) + 1):
        said = records.get(step)
        if said is not None:
            reply.say(said.text, said.sources, said.reasoning)
        step_calls = calls.get(step, [])
        reply.parts.extend(tool_call_part(c.call_id, c.name, c.input) for c in step_calls)
        if step_calls and (status not in OPEN_STATUSES or step < current):
            reply.add_results(step_calls)
    return status, records.get(max(records)) if records else None


class _Reply:
    """The parts of a reply as they are derived, its sources' numbers by URL, and the calls
    whose results it shows."""

    def __init__(self) -> None:
        self.parts: list[Part] = []
        self.numbers: dict[str, int] = {}
        self.answered: list[ToolCall] = []

    def say(self, text: str, sources: Iterable[Mapping[str, Any]], reasoning: str = "") -> None:
        last = self.parts[-1] if self.parts else None
        if text and not reasoning and last is not None and kind_of(last) == TEXT:
            # Only a continuation follows text with text: it goes on in the same words,
            # mid-sentence as the page showed it, so that Copy copies one answer.
            self.parts[-1] = text_part(last["text"] + text)
            self.parts.extend(self.cite(sources))
            return
        self.parts.extend(self.cite(sources))
        if reasoning:
            self.parts.append(reasoning_part(reasoning))
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


def write_reply(turn_id: str, status: str | None = None) -> list[Part] | None:
    """Set the stored reply's parts to ``reply_parts`` (and its status, when given); return
    them, None for a turn without a reply yet (uncommitted: committed with what follows)."""
    turn = db.session.execute(
        db.select(Turn.assistant_message_id, Turn.status, Turn.step).filter_by(id=turn_id)
    ).first()
    if turn is None or turn.assistant_message_id is None:
        return None
    message_id = turn.assistant_message_id
    parts, grounding = derive_reply(turn_id, (turn.status, turn.step))
    values: dict[str, Any] = {"parts": parts, "grounding": grounding}
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
    """Return every URL the turn's reply cites: the model's sources of each step, and the
    sources of each tool call's result, shown in the reply yet or not (with those of the
    earlier turns of a continued reply)."""
    turn_ids = [*earlier_turn_ids(turn_id), turn_id]
    steps = db.select(TurnStep.sources).filter(TurnStep.turn_id.in_(turn_ids))
    cited = {s["url"] for sources in db.session.scalars(steps) for s in sources or []}
    calls = db.session.scalars(db.select(ToolCall.citations).filter(ToolCall.turn_id.in_(turn_ids)))
    cited.update(c["url"] for citations in calls for c in citations or [])
    return cited


def shown_output(state: TurnState) -> StepOutput:
    """Return the text, sources and reasoning the page was shown of the turn's current step."""
    text, sources, reasoning = [], [], []
    for _entry_id, name, data in state.events_since(STEP_BOUNDARIES):
        if name == TEXT_DELTA:
            text.append(data.get("text", ""))
        elif name == SOURCE_ADDED:
            sources.append(data)
        elif name == REASONING_DELTA:
            reasoning.append(data.get("text", ""))
    return StepOutput("".join(text), sources, "".join(reasoning))


def step_shown(state: TurnState) -> bool:
    """Whether the page was already shown text or a source of the turn's current step."""
    return any(
        name in (TEXT_DELTA, SOURCE_ADDED, REASONING_DELTA)
        for _id, name, _data in state.events_since(STEP_BOUNDARIES)
    )
