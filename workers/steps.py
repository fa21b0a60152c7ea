"""The model-step task: stream one model call of a turn, then end the turn or fan out its tools.

A step is claimed atomically in the database before it runs, so a task delivered twice runs
once; a step whose worker died (its heartbeat went stale) is taken over and run again. Tool
calls go out as ``run_tool_call`` tasks, the last of which to end sends the next step: no
task ever waits on another task's result.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from flask import current_app
from redis.client import Pipeline
from redis.exceptions import NoScriptError
from sqlalchemy import Row, bindparam, inspect
from sqlalchemy.exc import OperationalError

from core import broker, metrics
from core.extensions import db
from core.models import Message, Turn
from core.models.providers import context_tokens, max_tokens
from core.models.uploads import with_attachment_texts
from core.plugin_host import get_host
from core.turn import events
from core.turn.calls import store_calls, stored_call_ids
from core.turn.lifecycle import claim_step, finish_turn, record_usage
from core.turn.parts import Part
from core.turn.replies import (
    Records,
    StepOutput,
    cited_in,
    read_records,
    step_shown,
    write_records,
)
from core.turn.sources import Sources
from core.turn.state import TurnState, turn_state
from tools.api import Signal
from workers.celery_app import celery
from workers.fanout import dispatch
from workers.follow_ups import TIMEOUT_SECONDS, FollowUps, ask_follow_ups, follow_ups_asked
from workers.offer import (
    Offered,
    TurnFailed,
    get_turn_model,
    is_untrusted_name,
    offered_tools,
    owner_id,
)
from workers.prompts import StoredMessage, build_messages
from workers.providers import ChatProvider, ProviderError, ToolSpec
from workers.providers.tokens import prompt_chars, tool_chars
from workers.reaper import fail_dead_turn
from workers.runtime import get_watcher, provider_client
from workers.streaming import add_step_tokens, stream_reply
from workers.turn_task import TurnTask

# How often a delivery of a step that another worker runs looks again.
BUSY_RETRY_SECONDS = 5
log = logging.getLogger("lookout.turns")


@celery.task(
    name=broker.RUN_TURN_STEP, base=TurnTask, bind=True, ignore_result=True, reads_versions=True
)
def run_turn_step(self, turn_id: str, step: int) -> str:
    """Run step ``step`` of a turn, once (again while the database does not answer, as
    ``TurnTask`` bounds it: the claim and the step's end are each one transaction). The
    versions of what the process keeps (providers, plugins, limits) are read in one MGET, in
    the round trip that clears the task's queued marker (``TurnTask.reads_versions``)."""
    return run_claimed_step(self, turn_id, step)


def run_claimed_step(task, turn_id: str, step: int) -> str:
    """Claim and run the step (``run_turn_step``); ``task`` waits while another worker runs it."""
    claim, turn, made_reply = claim_step(turn_id, step)
    if claim == "busy":
        raise task.wait(BUSY_RETRY_SECONDS)
    if claim == "taken":  # from a worker that died
        if call_ids := stored_call_ids(turn_id, step):
            dispatch(turn_id, step, call_ids)  # the step had stored its calls: only their
            return "redispatched"  # dispatch may be missing
        if step_shown(turn_state(turn_id)):  # run again, it would show its text twice: end
            fail_dead_turn(turn_id)  # the turn as the reaper would
            return "ended"
    if claim not in ("claimed", "started", "taken"):
        return claim
    # A step reads what it derives from with its claim, in one transaction: its history, and
    # the reply's records (but a reply the claim just made: none stored yet, no earlier turn
    # wrote it). A later step writes the reply with the previous step's results there too.
    # Nothing is left to commit after the offers (which may load plugins: the transaction
    # holds no write lock meanwhile, which on SQLite would hold back the turn's beats).
    path = branch(turn.conversation_id, turn.assistant_message_id)
    if made_reply:
        records = Records.new_reply(turn.assistant_message_id, turn.id)
    else:
        records = read_records(turn.id)
    # Step 0 has nothing stored to derive from (a step that stored calls is never run again),
    # and no write: on SQLite each write waits for every other turn's.
    said = write_records(records) if step > 0 and records is not None else []
    # Committed at once, and beating from here on, not only while the model streams: a step
    # that is slow to start (plugins loading) is not a dead worker, and a turn whose claim is
    # not yet visible looks still queued to the reaper.
    keep_loaded(turn)
    db.session.commit()
    try:
        # Registered unread: the step reads the flags with its first event (``read_flags``).
        with get_watcher().watching(turn_id, Signal(), read=False):
            model_step(turn, step, path, records, said, claim == "started")
    except (TurnFailed, ProviderError) as exc:
        end(turn_id, "failed", exc.message, keep=True)
    except OperationalError:
        raise
    except Exception:
        log.exception("turn %s failed in step %s", turn_id, step)
        end(turn_id, "failed", "Something went wrong while answering. Send the message again.")
    return "done"


def keep_loaded(turn: Turn) -> None:
    """Detach the claimed turn with its columns loaded, so that the commit after the claim does
    not expire it: the step reads it as claimed rather than with a second SELECT of its row.
    Nothing writes through it afterwards (the step's writes are statements by id). A claim's
    turn comes detached already (``statements.claimed_turn``); a take-over's is the session's."""
    if inspect(turn).session is None:
        return
    if inspect(turn).expired_attributes:  # a take-over's commit expired it
        db.session.refresh(turn)
    db.session.expunge(turn)


_MESSAGES = Message.__table__.c
# The columns a step's history needs, as rows rather than ORM objects (which cost as much
# again to build, and their identity map to keep, as the query to run).
_BRANCH = db.select(_MESSAGES.id, _MESSAGES.parent_id, _MESSAGES.role, _MESSAGES.parts).where(
    _MESSAGES.conversation_id == bindparam("conversation")
)


def branch(conversation_id: str, message_id: str) -> list[Row]:
    """Return the messages (``id``, ``parent_id``, ``role``, ``parts``) from the conversation's
    start down to ``message_id``.

    One query loads the conversation's messages and the path is walked in memory: a query per
    message made every step of a long conversation slower than the last.
    """
    rows = db.session.connection().execute(_BRANCH, {"conversation": conversation_id})
    by_id = {m.id: m for m in rows}
    path: list[Row] = []
    current: Row | None = by_id.get(message_id)
    while current is not None and len(path) <= len(by_id):  # a cycle cannot loop forever
        path.append(current)
        current = by_id.get(current.parent_id) if current.parent_id else None
    return list(reversed(path))


def model_step(
    turn: Turn,
    step: int,
    path: list[Row],
    records: Records | None,
    said: list[Part],
    announce: bool = False,
) -> None:
    """Stream one model call and store what it said; end the turn or dispatch its tools.

    ``path``, ``records`` and ``said`` are what the step read with its claim: its history
    (``branch``), the reply's records (None for a turn without a reply) and, for a later step,
    the reply with the previous step's tool results, as written. Whatever the stream said is
    kept however it ends. The tools offered are worked out once, here, and stored with the
    calls. ``announce`` publishes ``turn.started`` once the claim that made the reply is
    committed. A continuation (core/turn/continuation.py) is offered no tools and sent its
    reply as stored, then the instruction to go on.
    """
    config = current_app.config
    state = turn_state(turn.id)
    user_id = owner_id(turn)
    provider_row, model = get_turn_model(turn)
    host = get_host()  # once a step
    # The records answer whether the turn continues a reply, what the previous step's results
    # add to it and what it cites, and serve the step's write of its calls or its ending.
    continuing = records is not None and records.continued
    offers = [] if continuing else offered_tools(turn, model, host, user_id)
    cited = cited_in(records) if records is not None and (step > 0 or continuing) else set()
    sources = Sources(state, cited)
    # A first step that offers tools seeds the turn's cited set with what it starts from (a
    # new reply's first step: nothing), so its calls' claims need no read of the database. Only
    # an offered tool's call cites (a continuation is offered none); a later step's calls find
    # the set seeded, or read the database once if Redis lost it meanwhile.
    seed = cited if step == 0 and offers and records is not None else None
    last_step = step >= config["TURN_MAX_STEPS"] - 1
    history = [
        StoredMessage(m.role, parts)
        for m, parts in zip(path, with_attachment_texts(m.parts for m in path), strict=True)
    ]
    if step > 0 or not continuing:  # a continuation starts from the reply as stored
        history[-1] = StoredMessage("assistant", said)
    specs = [] if last_step else [spec_of(o) for o in offers]
    answer_tokens = max_tokens(model)
    room = prompt_chars(
        context_tokens(model), answer_tokens, tool_chars(spec.to_openai() for spec in specs)
    )
    messages = build_messages(
        history,
        is_untrusted_name(offers, host),
        config["CONTEXT_TOOL_CHARS"],
        config["APP_NAME"],
        context_chars=room,
        continuing=continuing,
    )
    provider = provider_client(provider_row)
    turn_id, usage, model_id = turn.id, turn.usage, turn.model
    message_id = turn.assistant_message_id
    if db.session().in_transaction():  # no connection held while the model streams
        db.session.commit()
    read_flags(state, events.started_event(message_id) if announce else None, seed)
    started = time.monotonic()
    streamed = stream_reply(state, provider, model["name"], messages, specs, sources, answer_tokens)
    counted = streamed.usage
    metrics.model_step(
        model_id,
        time.monotonic() - started,
        counted.input_tokens if counted else 0,
        counted.output_tokens if counted else 0,
    )
    output = StepOutput(streamed.text, streamed.sources, streamed.reasoning)
    usage = add_step_tokens(usage, streamed.usage)
    if streamed.cancelled:
        end(turn_id, "cancelled", usage=usage, output=output, records=records)
    elif streamed.error is not None:
        end(turn_id, "failed", streamed.error.message, usage=usage, output=output, records=records)
    elif streamed.calls:
        if not record_usage(turn_id, usage):
            db.session.rollback()  # the turn ended meanwhile (a Stop): its ending kept the reply
            return
        offered = {o.tool.name: o for o in offers}
        call_ids = store_calls(turn_id, step, user_id, output, offered, streamed.calls, records)
        db.session.commit()
        dispatch(turn_id, step, call_ids)
    else:
        if follow_ups_asked(model) and streamed.text.strip():
            asked = follow_up(turn_id, provider, model["name"], messages, streamed.text)
            output = replace(output, follow_ups=asked.questions or None)
            usage = add_step_tokens(usage, asked.usage)
        end(turn_id, "completed", usage=usage, output=output, records=records)


def read_flags(
    state: TurnState,
    event: tuple[str, dict[str, Any]] | None = None,
    cited: set[str] | None = None,
) -> None:
    """Read the watched turns' cancel flags (the caller registered its turn unread) and, with
    ``event`` (a name and its data), publish it in the same round trip: each was a round trip
    of its own. A step's first event is ``turn.started`` when it announces the turn, a tool
    call's is ``tool.started`` (``workers.toolcalls``); a turn ended meanwhile publishes none.
    With ``cited`` (what the reply cites, as the step read it), the turn's cited set is seeded
    with it in the same round trip too (``TurnState.seed_cited``)."""
    alone: list[Callable[[], object]] = []
    if event is not None:
        alone.append(partial(state.publish, *event))
    if cited is not None:
        alone.append(partial(state.seed_cited, cited))

    def queue(pipe: Pipeline) -> None:
        if event is not None:
            state.publish_in(pipe, *event)
        if cited is not None:
            state.seed_cited_in(pipe, cited)

    answers = get_watcher().check_once(queue if alone else None)
    for answer, send in zip(answers, alone, strict=True):
        if isinstance(answer, NoScriptError):  # a new or restarted server: sent alone, which
            send()  # gives the server the script
        elif isinstance(answer, Exception):
            raise answer


def follow_up(
    turn_id: str, provider: ChatProvider, model_name: str, messages: list[dict], answer: str
) -> FollowUps:
    """Return the follow-up questions for the turn's answer (``workers.follow_ups``); a Stop
    meanwhile cancels the call."""
    question = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    signal = Signal.after(TIMEOUT_SECONDS)
    with get_watcher().watching(turn_id, signal):
        return ask_follow_ups(provider, model_name, str(question or ""), answer, signal)


def spec_of(offered: Offered) -> ToolSpec:
    """Return the tool as offered to the model, with its JSON Schema (``Tool.json_schema``:
    derived from its input schema once per process, or the one an MCP server listed)."""
    tool = offered.tool
    return ToolSpec(tool.name, tool.description, tool.json_schema())


def end(
    turn_id: str,
    status: str,
    error: str | None = None,
    usage: dict | None = None,
    keep: bool = False,
    output: StepOutput | None = None,
    records: Records | None = None,
) -> None:
    """End the turn, if nothing ended it already.

    ``output`` is what the step said, when it streamed; without it the ending keeps what the
    user saw (see ``finish_turn``). ``keep`` commits what the session holds with the ending;
    without it (and without ``output``), whatever a failed step left unsaved is dropped first.
    ``records``: the reply's records as the step read them (``finish_turn``).
    """
    if not keep and output is None:
        db.session.rollback()
    finish_turn(turn_id, status, error, usage, output, records=records)
