"""The words of a turn, each defined once (as Celery's ``states.py`` defines its task states):
a turn's statuses, what a claim answers, what a tool call came to.

Turn statuses, in the order they happen (``core.turn.lifecycle`` writes every one):
    queued → running → completed | failed | cancelled
"""

from __future__ import annotations

from typing import Literal, get_args

TurnStatus = Literal["queued", "running", "completed", "failed", "cancelled"]
TURN_STATUSES: tuple[TurnStatus, ...] = get_args(TurnStatus)
# A turn still open: at most one per conversation, and counted in the user's running turns.
OPEN_STATUSES: tuple[TurnStatus, ...] = ("queued", "running")
ENDED_STATUSES: tuple[TurnStatus, ...] = ("completed", "failed", "cancelled")

# What a delivery of a step's task is told by its claim (``lifecycle.claim_step``): it runs
# ("claimed"; "started", having made the reply; "taken" from a worker that died), waits
# ("busy"), or why it will not run.
StepClaim = Literal["claimed", "started", "taken", "busy", "gone", "ended", "stale-task"]

# What a delivery of a tool call's task is told by its claim (``calls.claim_call``).
CallClaim = Literal["claimed", "again", "busy", "done", "gone"]

# What a tool call came to; stored in ``ToolCall.outcome`` and shown in its result part.
CallOutcome = Literal["ok", "error", "timeout", "refused", "cancelled"]
CALL_OUTCOMES: tuple[CallOutcome, ...] = get_args(CallOutcome)
# The outcomes counted as tool errors in usage: a cancelled call did not fail.
FAILED_OUTCOMES: tuple[CallOutcome, ...] = ("error", "timeout", "refused")
