"""The tool-call task: run one tool call of a turn under its deadline and store the raw result."""

from __future__ import annotations

import contextvars
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from flask import current_app

from core import broker, metrics
from core.extensions import db
from core.models import ToolCall, Turn
from core.tool_names import tool_label
from core.turn import events
from core.turn.calls import finish_call, take_call
from core.turn.lifecycle import commit_loaded
from core.turn.state import turn_state
from core.turn.states import CallOutcome
from tools.api import Cancelled, Signal, Tool, ToolContext, ToolError, ToolRefused
from tools.parser_shares import acting_for
from workers.abandoned import abandoned
from workers.celery_app import celery
from workers.context import make_tool_context
from workers.fanout import send_next_step
from workers.next_steps import run_next_step
from workers.offer import owner_id, resolve_call
from workers.runtime import get_watcher
from workers.steps import read_flags
from workers.turn_task import TurnTask

GRACE_SECONDS = 1.0
# What a call's task does with the next step once its call has its outcome: (turn, step).
NextStep = Callable[[str, int], object]
log = logging.getLogger("lookout.tools")


@dataclass
class Outcome:
    """What one call came to: output or error, the outcome word logged and stored, what the
    tool said it spent (``tools.usage``) and the sources an ``ok`` result cites."""

    outcome: CallOutcome
    output: Any = None
    error: str | None = None
    spent: list[tuple[str, str, int]] = field(default_factory=list)
    citations: list[dict[str, Any]] = field(default_factory=list)


def execute_with_deadline(
    tool: Tool, input: dict[str, Any], ctx: Any, abandoned_max: int = 8
) -> Outcome:
    """Run ``tool.execute`` in its own thread, giving up at the signal's deadline or cancel.

    A tool that ignores its signal is left behind (its result is dropped), so the turn never
    waits longer than the tool's deadline plus a short grace; the worker counts such threads
    (``workers.abandoned``) and stops taking tasks past ``abandoned_max`` of them.
    """
    box: dict[str, Any] = {}
    lock = threading.Lock()

    def target() -> None:
        try:
            box["output"] = tool.execute(input, ctx)
        except BaseException as exc:  # stored, then judged below  # noqa: BLE001
            box["error"] = exc
        finally:
            with lock:
                box["ended"] = True
                was_abandoned = "abandoned" in box
            if was_abandoned:
                abandoned.release(abandoned_max)

    # The caller's context variables (whose parser share it is) follow the call into its thread.
    thread = threading.Thread(
        target=contextvars.copy_context().run, args=(target,), name=f"tool-{tool.name}", daemon=True
    )
    thread.start()
    signal: Signal = ctx.signal
    while thread.is_alive() and not signal.cancelled:
        thread.join(timeout=min(1.0, max(0.01, signal.remaining())))
    thread.join(timeout=GRACE_SECONDS)
    with lock:
        left_running = "ended" not in box
        if left_running:
            box["abandoned"] = True
    if left_running:
        log.warning("tool %s ignored its stop and is left running", tool.name)
        abandoned.adopt(abandoned_max)
    if left_running or (signal.cancelled and "error" in box):
        return _stopped(tool, signal)
    if "error" in box:
        return _judge(tool, box["error"], signal)
    try:
        json.dumps(box.get("output"))
    except (TypeError, ValueError):
        return Outcome("error", error=f"The tool {tool.name} returned output that is not JSON.")
    return Outcome("ok", output=box.get("output"))


def _stopped(tool: Tool, signal: Signal) -> Outcome:
    if signal.timed_out:
        return Outcome(
            "timeout", error=f"{tool.name} did not finish within {tool.timeout_seconds:g} seconds."
        )
    return Outcome("cancelled", error="The turn was cancelled before this call finished.")


def _judge(tool: Tool, exc: BaseException, signal: Signal) -> Outcome:
    if isinstance(exc, ToolRefused):
        return Outcome("refused", error=exc.message)
    if isinstance(exc, ToolError):
        return Outcome("error", error=exc.message)
    if isinstance(exc, Cancelled):
        return _stopped(tool, signal)
    log.error("tool %s raised an unexpected error", tool.name, exc_info=exc)
    return Outcome(
        "error", error=f"The tool {tool.name} failed unexpectedly. Try again, or answer without it."
    )


# Its result is stored nowhere: nothing waits for a call's task (its outcome is in the database).
@celery.task(
    name=broker.RUN_TOOL_CALL,
    base=TurnTask,
    bind=True,
    acks_late=True,
    ignore_result=True,
    reads_versions=True,
)
def run_tool_call(self, turn_id: str, call_id: str) -> str:
    """Run one stored tool call, once: the delivery that claims it runs it (again while the
    database does not take its outcome, as ``TurnTask`` bounds it); then, when it was the
    step's last call to end, run the next step in this task (``workers.next_steps``).

    Another delivery of a call that another task holds returns at once: the holder runs the
    next step when it ends, and the reaper ends the turn if the holder's worker died. A
    delivery of a call that has its outcome runs the next step as the last call would, in
    case the one that stored it stopped before (a step taken over sends every call), or its
    step failed on the database and this is its run again. The versions of what the process
    keeps (plugins, settings, limits) are read in one MGET, in the round trip that clears the
    task's queued marker (``TurnTask.reads_versions``), and again for the next step.
    """
    here = partial(run_next_step, call_id=call_id)
    return take_and_run(turn_id, call_id, self.request.id, here)


def take_and_run(
    turn_id: str, call_id: str, task_id: str, next_step: NextStep = send_next_step
) -> str:
    """Claim the call for the task ``task_id`` and run it (``run_tool_call``); then
    ``next_step(turn_id, step)``: the task runs the next step itself
    (``workers.next_steps``), a caller outside a task sends it (``fanout.send_next_step``)."""
    claim, call, turn = take_call(turn_id, call_id, task_id)
    step = call.step if call is not None else None  # read before a commit expires the call
    if claim == "done":
        db.session.rollback()
        next_step(turn_id, step)
        return "skipped"
    if claim not in ("claimed", "again"):
        db.session.rollback()
        return "skipped"
    # The claim, seen at once by any other delivery of this call. The task reads its call and
    # turn after each commit only for what no other process changes (the call's name and
    # owner, the turn's conversation and roles) and what it writes itself.
    commit_loaded()
    # Beats from the claim, as a step does, and trips ``stopped`` on a Stop. Registered
    # unread: the call reads the flags with its ``tool.started`` (``run_claimed``).
    with get_watcher().watching(turn_id, Signal(), read=False) as stopped:
        outcome = run_claimed(call, turn or db.session.get(Turn, turn_id), stopped)
    next_step(turn_id, step)
    return outcome


def run_claimed(call: ToolCall, turn: Turn, stopped: Signal) -> str:
    """Run a claimed call, store its result and publish its ending; return its outcome. The
    call and its turn as the claim returned them (the turn read only when it had stopped);
    ``stopped``, the watcher's signal of the turn's Stop, registered unread: the cancel flags
    are read in the round trip that publishes ``tool.started`` (a Stop raises the flag with the
    turn's end, which refuses the publish), then the call runs unless the flag was up."""
    turn_id, call_id = call.turn_id, call.call_id
    started = time.monotonic()
    name, plugin = call.name, call.plugin
    state = turn_state(turn_id)
    if turn.status == "running" and not stopped.cancelled:
        read_flags(state, events.tool_started_event(call_id, name, call.input))
    if turn.status != "running" or stopped.cancelled:
        result = Outcome("cancelled", error="The turn was cancelled before this call started.")
    else:
        result = run_call(turn, call, stopped)
    label = tool_label(name, call.source)  # the model's name, bounded: see tool_names
    finish_call(
        call,
        result.outcome,
        result.output,
        result.error,
        result.spent,
        owner_id(turn),
        label,
        result.citations,
    )
    seconds = time.monotonic() - started
    metrics.tool_call(label, result.outcome, seconds, result.output)
    duration_ms = round(seconds * 1000)
    log.info(
        "tool_call turn=%s plugin=%s tool=%s duration_ms=%d outcome=%s",
        turn_id,
        plugin,
        label,
        duration_ms,
        result.outcome,
        extra={
            "turn": turn_id,
            "plugin": plugin,
            "tool": label,
            "duration_ms": duration_ms,
            "outcome": result.outcome,
        },
    )
    events.tool_finished(state, call_id, name, result.outcome, result.output, result.error)
    return result.outcome


def run_in_context(tool: Tool, input: Any, ctx: ToolContext, signal: Signal) -> Outcome:
    """Return the outcome of ``tool`` run in ``ctx`` under its deadline, with what it spent; a
    turn's call and an MCP client's call (``workers.user_tools``) both run through here."""
    # A cancel or the deadline shuts the call's connections down, waking blocked reads
    # (a plain session, with private networks allowed, can only be closed).
    undo = signal.on_cancel(getattr(ctx.fetch, "abort", ctx.fetch.close))
    try:
        with acting_for(ctx.user):  # its parsing counts against the user's fair share
            result = execute_with_deadline(tool, input, ctx, current_app.config["ABANDONED_MAX"])
    finally:
        undo()
        ctx.fetch.close()
    result.spent = ctx.meter.counts()
    return result


def run_call(turn: Turn, call: ToolCall, stopped: Signal) -> Outcome:
    """Find the tool the step offered, validate the input and run it under its deadline, or
    until ``stopped`` (the turn's Stop, as the task's watcher sees it) trips."""
    offered = resolve_call(call)
    if offered is None:
        return Outcome("error", error=f"The tool {call.name} was not offered in this turn.")
    tool = offered.tool
    try:
        input = tool.validate_input(call.input)
    except ToolError as exc:
        return Outcome("error", error=exc.message)
    signal = Signal.after(tool.timeout_seconds)
    # The task's one registration with the watcher stops the tool too: a second one would
    # read the cancel flag again as it began.
    undo = stopped.on_cancel(signal.cancel)
    try:
        ctx, sources, collected = make_tool_context(turn, call, offered, signal)
        commit_loaded()  # ends the read transaction: no connection held while the tool runs
        result = run_in_context(tool, input, ctx, signal)
    finally:
        undo()
    # The sources of an ok result only: a call that failed or timed out cites nothing (and
    # one that collected none asks nothing of Redis: whether the turn ended is moot).
    if result.outcome == "ok" and collected.citations:
        result.citations = sources.claim_all(collected.citations)
    return result
