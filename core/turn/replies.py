"""What a reply shows and keeps, derived in one place from what happened: the output each model
step stored (``TurnStep``) and the turn's tool calls (``ToolCall``).

    record_step    a step's own output, stored with its calls or its ending (one transaction)
    read_records   those records, read once: one statement each for the turns, steps and calls
    derive_reply   the reply's parts (and grounding) derived from records, read or as an
                   ending leaves them (``Records.ending``, core/turn/endings.py)
    reply_parts    the reply's parts, in order, derived from the stored records
    write_reply    the one writer of ``Message.parts`` (and of ``Message.grounding``), through
                   ``store_reply``, which the ending calls with the reply it derived (and
                   ``write_records``, which a step calls with the records it read)
    cited_urls     the one answer to "what does this turn's reply cite" (``cited_in``: the
                   same answer from records already read)
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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import and_, bindparam, or_, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import aliased

from core.extensions import db
from core.models import Message, ToolCall, Turn, TurnStep
from core.turn import statements
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
    committed with the step's calls or with its ending): one upsert, no read first."""
    connection = db.session.connection()
    connection.execute(
        _step_upsert(connection.dialect.name),
        {
            "turn_id": turn_id,
            "step": step,
            "text": output.text,
            "sources": [{"url": s["url"], "title": s.get("title")} for s in output.sources],
            "reasoning": output.reasoning,
            "follow_ups": output.follow_ups,
        },
    )


_STEP_UPSERTS: dict[str, Any] = {}


def _step_upsert(dialect: str) -> Any:
    """The step record's upsert for ``dialect``, built once (its compiled form is cached)."""
    statement = _STEP_UPSERTS.get(dialect)
    if statement is None:
        insert = (postgresql if dialect == "postgresql" else sqlite).insert(TurnStep)
        statement = _STEP_UPSERTS[dialect] = insert.on_conflict_do_update(
            index_elements=[TurnStep.turn_id, TurnStep.step],
            set_={name: insert.excluded[name] for name in _STEP_FIELDS},
        )
    return statement


_STEP_FIELDS = ("text", "sources", "reasoning", "follow_ups")


@dataclass
class TurnRecords:
    """What one turn stored for its reply: its status and step, each step's output by step,
    and its tool calls by step (in order)."""

    turn_id: str
    status: str
    step: int
    steps: dict[int, StepOutput]
    calls: dict[int, list[ToolCall]]


@dataclass
class Records:
    """What a reply is derived from, read at once: its message's id, and the records of each
    turn that wrote it, oldest first, the turn asked about last."""

    message_id: str
    turns: list[TurnRecords]

    @property
    def turn(self) -> TurnRecords:
        return self.turns[-1]

    @property
    def continued(self) -> bool:
        """Whether earlier turns wrote into the reply: the turn is a continuation."""
        return len(self.turns) > 1

    @classmethod
    def new_reply(cls, message_id: str, turn_id: str) -> Records:
        """Return the records of a reply the turn's first step just made: none stored yet."""
        return cls(message_id, [TurnRecords(turn_id, "running", 0, {}, {})])

    def ending(self, status: str, output: StepOutput | None) -> Records:
        """Return these records as the turn's ending leaves them: ended with ``status``, and
        ``output`` (when given) as its current step's."""
        ended = self.with_step(output) if output is not None else self
        return Records(self.message_id, [*self.turns[:-1], replace(ended.turn, status=status)])

    def with_step(self, output: StepOutput, calls: Sequence[ToolCall] = ()) -> Records:
        """Return these records with ``output`` and ``calls`` as the turn's current step's,
        as the step stores them."""
        turn = self.turn
        steps = {**turn.steps, turn.step: output}
        step_calls = {**turn.calls, turn.step: list(calls)} if calls else turn.calls
        stepped = TurnRecords(turn.turn_id, turn.status, turn.step, steps, step_calls)
        return Records(self.message_id, [*self.turns[:-1], stepped])


def _reads() -> tuple[Any, Any, Any]:
    """The three reads of ``read_records``, built once: building a select (an aliased join
    above all) cost more CPU than running it. Written against the tables: their rows are read
    as rows (the step records) or built into detached calls (``statements.detached``), which
    cost a fraction of the ORM's loading into the session, and which a commit does not expire
    (a step's commit before its model call made its ending read every call again)."""
    turns_table, steps_table, calls_table = (m.__table__ for m in (Turn, TurnStep, ToolCall))
    this = turns_table.alias("me")
    turns, me = turns_table.c, this.c
    wrote = db.select(
        turns.id, turns.status, turns.step, turns.assistant_message_id, turns.created_at
    ).join(
        this,
        or_(
            turns.id == me.id,
            and_(
                turns.assistant_message_id == me.assistant_message_id,
                turns.created_at < me.created_at,
            ),
        ),
    )
    ids = bindparam("ids", expanding=True)
    steps = db.select(
        steps_table.c.turn_id,
        steps_table.c.step,
        steps_table.c.text,
        steps_table.c.sources,
        steps_table.c.reasoning,
        steps_table.c.follow_ups,
    ).where(steps_table.c.turn_id.in_(ids))
    calls = (
        db.select(calls_table)
        .where(calls_table.c.turn_id.in_(ids))
        .order_by(calls_table.c.step, calls_table.c.position)
    )
    return wrote.where(me.id == bindparam("turn_id")), steps, calls


_TURNS, _STEPS, _CALLS = _reads()


def read_records(turn_id: str) -> Records | None:
    """Return what the turn's reply is derived from, None for a turn without a reply (yet):
    one read each of the turns that wrote it, their step records and their tool calls (the
    calls detached: nothing writes through them)."""
    rows = statements.run(_TURNS, {"turn_id": turn_id}).all()
    this = next((row for row in rows if row.id == turn_id), None)
    if this is None or this.assistant_message_id is None:
        return None
    earlier = sorted((row for row in rows if row.id != turn_id), key=lambda row: row.created_at)
    ids = [row.id for row in earlier] + [turn_id]
    steps: dict[str, dict[int, StepOutput]] = {i: {} for i in ids}
    for record in statements.run(_STEPS, {"ids": ids}):
        steps[record.turn_id][record.step] = StepOutput(
            record.text, record.sources or [], record.reasoning, record.follow_ups
        )
    calls: dict[str, dict[int, list[ToolCall]]] = {i: {} for i in ids}
    for row in statements.run(_CALLS, {"ids": ids}):
        call = statements.detached(ToolCall, row._mapping)
        calls[call.turn_id].setdefault(call.step, []).append(call)
    return Records(
        this.assistant_message_id,
        [TurnRecords(r.id, r.status, r.step, steps[r.id], calls[r.id]) for r in [*earlier, this]],
    )


def reply_parts(turn_id: str) -> list[Part]:
    """Return the parts of a turn's reply, derived from its step records and tool calls, after
    those of the earlier turns that wrote into the same reply (a continued reply)."""
    records = read_records(turn_id)
    return derive_reply(records)[0] if records is not None else []


def derive_reply(records: Records) -> tuple[list[Part], dict[str, Any] | None]:
    """Return the parts of the reply ``records`` make (see ``reply_parts``) and, once the turn
    has ended, how it used the web (``core.turn.grounding``; None while it runs)."""
    reply = _Reply()
    for turn in records.turns:
        _derive(reply, turn)
    turn = records.turn
    if turn.status in OPEN_STATUSES:
        return reply.parts, None
    reply.parts = checked_parts(reply.parts, reply.answered, reply.numbers)
    last = turn.steps[max(turn.steps)] if turn.steps else None
    if turn.status == "completed" and last is not None and last.follow_ups:
        reply.parts.append(follow_ups_part(last.follow_ups))
    grounding = grounding_of(reply.answered)
    if grounding is None and turn.status == "completed":
        grounding = without_the_web()
    return reply.parts, grounding


def source_numbers(turn_id: str) -> dict[str, int]:
    """Return the number of each source the turn's reply cites, by URL: 1, 2, … in the order
    of first citation, the Sources row's."""
    records = read_records(turn_id)
    reply = _Reply()
    for turn in records.turns if records is not None else []:
        _derive(reply, turn)
    return reply.numbers


def earlier_turn_ids(turn_id: str, known: Turn | None = None) -> list[str]:
    """Return the turns that wrote into this turn's reply before it, oldest first: none unless
    the turn continues a reply (core/turn/continuation.py). ``known``: the turn, loaded, when
    the caller holds it (its reply and creation time are read otherwise)."""
    turn = known
    if turn is None:
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


def _derive(reply: _Reply, turn: TurnRecords) -> None:
    """Add one turn's steps to ``reply``."""
    for step in range(max([turn.step, *turn.steps, *turn.calls]) + 1):
        said = turn.steps.get(step)
        if said is not None:
            reply.say(said.text, said.sources, said.reasoning)
        step_calls = turn.calls.get(step, [])
        reply.parts.extend(tool_call_part(c.call_id, c.name, c.input) for c in step_calls)
        if step_calls and (turn.status not in OPEN_STATUSES or step < turn.step):
            reply.add_results(step_calls)


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
    records = read_records(turn_id)
    return None if records is None else write_records(records, status)


def write_records(records: Records, status: str | None = None) -> list[Part]:
    """Set the stored reply's parts to those ``records`` derive (and its status, when given);
    return them (uncommitted)."""
    parts, grounding = derive_reply(records)
    store_reply(records.message_id, parts, grounding, status)
    return parts


def store_reply(
    message_id: str, parts: list[Part], grounding: dict[str, Any] | None, status: str | None
) -> None:
    """Write a derived reply's parts and grounding (and its status, when given) to its message
    (uncommitted)."""
    values: dict[str, Any] = {"parts": parts, "grounding": grounding}
    if status is not None:
        values["status"] = status
    statements.run(
        _reply_update(tuple(values)),
        {"message_id": message_id, **{f"new_{k}": v for k, v in values.items()}},
    )


_REPLY_UPDATES: dict[tuple[str, ...], Any] = {}


def _reply_update(columns: tuple[str, ...]) -> Any:
    """The UPDATE of a reply's ``columns``, built once each (building it cost more than its
    run)."""
    statement = _REPLY_UPDATES.get(columns)
    if statement is None:
        statement = _REPLY_UPDATES[columns] = (
            update(Message.__table__)
            .where(Message.__table__.c.id == bindparam("message_id"))
            .values({name: bindparam(f"new_{name}") for name in columns})
        )
    return statement


def cited_urls(turn_id: str, known: Turn | None = None) -> set[str]:
    """Return every URL the turn's reply cites: the model's sources of each step, and the
    sources of each tool call's result, shown in the reply yet or not (with those of the
    earlier turns of a continued reply), read in one query. ``known``: as for
    ``earlier_turn_ids``."""
    if known is None:
        return _cited(_CITED_BY_ID, {"turn_id": turn_id})
    values = {"turn_id": turn_id, "reply": known.assistant_message_id}
    # A turn without a reply compares its reply to NULL, which matches no earlier turn.
    return _cited(_CITED_KNOWN, {**values, "created": known.created_at})


def _cited(statement: Any, values: dict[str, Any]) -> set[str]:
    return {c["url"] for cited in db.session.scalars(statement, values) for c in cited or []}


def _cited_reads() -> tuple[Any, Any]:
    """The read of ``cited_urls``, built once (building it cost as much CPU as running it): by
    the turn's id alone, and with the turn's reply and creation time known. The turns that
    wrote the reply are a subquery of the read that needs them."""
    turn_id = bindparam("turn_id")

    def cited(turns: Any) -> Any:
        steps = db.select(TurnStep.sources).filter(TurnStep.turn_id.in_(turns))
        calls = db.select(ToolCall.citations).filter(ToolCall.turn_id.in_(turns))
        return steps.union_all(calls)

    def wrote(reply: Any, created: Any) -> Any:
        earlier = and_(Turn.assistant_message_id == reply, Turn.created_at < created)
        return db.select(Turn.id).filter(or_(Turn.id == turn_id, earlier))

    this = aliased(Turn)
    by_id = wrote(this.assistant_message_id, this.created_at).join(this, this.id == turn_id)
    known = wrote(bindparam("reply"), bindparam("created", type_=Turn.created_at.type))
    return cited(by_id), cited(known)


_CITED_BY_ID, _CITED_KNOWN = _cited_reads()


def cited_in(records: Records) -> set[str]:
    """Return the URLs ``cited_urls`` answers, from the reply's records already read."""
    cited = {
        s["url"]
        for turn in records.turns
        for output in turn.steps.values()
        for s in output.sources or []
    }
    cited.update(
        c["url"]
        for turn in records.turns
        for calls in turn.calls.values()
        for call in calls
        for c in call.citations or []
    )
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
