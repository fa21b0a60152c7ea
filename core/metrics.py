"""Every Prometheus series Lookout publishes, and the one small function that records each.

Web and worker processes record here; ``/metrics`` (``webapp/metrics_endpoint.py``) reads them.
Under gunicorn and Celery each process keeps its own values, so ``PROMETHEUS_MULTIPROC_DIR``
(set by ./run) makes prometheus-client keep them in files of that folder, which a scrape sums:
the folder must be set before the process starts, and emptied when the deployment starts.
What is cheap to read at scrape time (the queue) is read then, not counted.

Label values come from bounded sets only: outcomes and reasons from fixed words, models from
the admin's providers, tools from the installed plugins (a name a model invented is counted as
``unknown``: ``core.tool_names``), engines from the installed search plugins' engines
(cut to 40 characters); never a user's or a model's text, nor a URL.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from prometheus_client import Counter, Gauge, Histogram

from core.config import prepare_metrics_folder
from core.turn.states import CALL_OUTCOMES, ENDED_STATUSES
from tools import net
from tools.api import SEARCH_FAILURE_REASONS, on_search_failure

prepare_metrics_folder()

TURN_OUTCOMES = ENDED_STATUSES
TOOL_OUTCOMES = CALL_OUTCOMES
REAPER_ACTIONS = (
    "sweep", "failed_turn", "requeued_turn", "resent_work", "failed_waiting_turn"
)  # fmt: skip
TOKEN_KINDS = ("input", "output")

STEP_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300)
TOOL_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 15, 20, 30, 60)

TURNS_FINISHED = Counter("lookout_turns_finished", "Turns ended, by outcome.", ["outcome"])
MODEL_STEP_SECONDS = Histogram(
    "lookout_model_step_seconds",
    "Time one model call of a turn took to stream, by model.",
    ["model"],
    buckets=STEP_BUCKETS,
)
TOOL_CALL_SECONDS = Histogram(
    "lookout_tool_call_seconds",
    "Time one tool call took, by tool and the search engine that answered (blank for none).",
    ["tool", "engine"],
    buckets=TOOL_BUCKETS,
)
TOOL_CALLS = Counter(
    "lookout_tool_calls", "Tool calls ended, by tool and outcome.", ["tool", "outcome"]
)
SEARCH_FAILURES = Counter(
    "lookout_search_failures",
    f"Searches an engine failed, by engine and why ({', '.join(SEARCH_FAILURE_REASONS)}), "
    "whether or not a fallback engine then answered.",
    ["engine", "reason"],
)
GUARD_REFUSALS = Counter(
    "lookout_guard_refusals",
    "Fetches the network guard refused, by the rule that refused them.",
    ["reason"],
)
MODEL_TOKENS = Counter(
    "lookout_model_tokens", "Tokens the models read (input) and wrote (output).", ["model", "kind"]
)
REAPER_ACTIONS_TOTAL = Counter(
    "lookout_reaper_actions",
    "What the reaper did: a sweep for dead turns (holding the lock), a dead turn failed, a turn "
    "whose queued task was lost sent again, a running turn's waiting work sent again, a turn "
    "that waited in the queue too long failed.",
    ["action"],
)
EVENT_STREAMS_OPEN = Gauge(
    "lookout_event_streams_open",
    "Event streams (SSE) the web processes are serving now.",
    multiprocess_mode="livesum",
)

# Known label sets start at zero, so that a dashboard shows 0 rather than no data.
for _outcome in TURN_OUTCOMES:
    TURNS_FINISHED.labels(_outcome)
for _action in REAPER_ACTIONS:
    REAPER_ACTIONS_TOTAL.labels(_action)


def turn_finished(outcome: str) -> None:
    """Count a turn that ended with ``outcome`` (completed, failed or cancelled)."""
    TURNS_FINISHED.labels(outcome).inc()


def model_step(model: str, seconds: float, input_tokens: int = 0, output_tokens: int = 0) -> None:
    """Record one model call: how long it streamed and the tokens it read and wrote."""
    MODEL_STEP_SECONDS.labels(model).observe(seconds)
    if input_tokens:
        MODEL_TOKENS.labels(model, "input").inc(input_tokens)
    if output_tokens:
        MODEL_TOKENS.labels(model, "output").inc(output_tokens)


def tool_call(tool: str, outcome: str, seconds: float, output: Any = None) -> None:
    """Record one ended tool call under its bounded label (``tool_names.tool_label``); a dict
    output's ``engine`` (web_search says which engine answered) labels its latency."""
    engine = output.get("engine") if isinstance(output, dict) else None
    engine = engine[:40] if isinstance(engine, str) else ""
    TOOL_CALL_SECONDS.labels(tool, engine).observe(seconds)
    TOOL_CALLS.labels(tool, outcome).inc()


def search_failed(engine: str, reason: str) -> None:
    """Count one search that ``engine`` failed, as a search plugin reported it
    (``tools.api.on_search_failure`` calls it)."""
    SEARCH_FAILURES.labels(engine[:40], reason).inc()


def guard_refused(reason: str) -> None:
    """Count one refusal of the network guard (``tools.net.on_refusal`` calls it)."""
    GUARD_REFUSALS.labels(reason).inc()


def reaper_action(action: str) -> None:
    """Count one thing the reaper did (see REAPER_ACTIONS)."""
    REAPER_ACTIONS_TOTAL.labels(action).inc()


@contextmanager
def event_stream_open() -> Iterator[None]:
    """Count an event stream as open while the block runs."""
    EVENT_STREAMS_OPEN.inc()
    try:
        yield
    finally:
        EVENT_STREAMS_OPEN.dec()


def count_plugin_events() -> None:
    """Count the network guard's refusals and the failed searches any search plugin reports,
    in this process (a worker's, where they happen, or the web's)."""
    net.on_refusal(guard_refused)
    on_search_failure(search_failed)
