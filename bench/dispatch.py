"""Dispatch overhead: what the queue adds to a turn, against the same calls made inline.

Run from the project root: ``.venv/bin/python -m bench.dispatch [--turns 30] [--warmup 3]``.

Both sides talk to the same zero-latency fake model (its own process) and run the same no-op
tool. Through the queue, a turn goes POST /api/conversations/<id>/turns -> worker step 0
(model asks for ``noop``) -> one ``run_tool_call``, which sends step 1 (model answers) -> the
SSE stream's ``turn.completed``, timed from before the POST to the stream's end. Inline, one
process builds the prompt, streams the model with the provider client, runs the tool and
streams again: no Celery, no database, no HTTP API. Text-only turns (one model step) are
timed the same way, so the cost of the two extra steps shows apart from the turn's fixed cost.
Beside the times, the worker's CPU per queued turn of each kind (its process and children) and
the Redis commands per queued turn (the stack's Redis, ``INFO commandstats``: worker, web and
this client's event stream together), which do not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from bench import bench_plugins
from bench.harness import EventReader, FakeModelProcess, Stack, machine, summary, table
from tests.support.chat import ChatClient
from tools.testing import start_plugin, tool_context_for_test
from workers.prompts import StoredMessage, build_messages
from workers.providers import OpenAICompatibleProvider, TextDelta, ToolCallRequest, ToolSpec

PHASES = (
    ("POST until its 202", "posted"),
    ("202 until turn.started (step 0 picked up)", "turn.started"),
    ("turn.started until tool.started (model call, call task sent and picked up)",
     "tool.started"),
    ("tool.started until tool.finished (tool run and stored)", "tool.finished"),
    ("tool.finished until turn.completed (step 1 sent, picked up, model call, end)",
     "turn.completed"),
)  # fmt: skip


def queued_turn(chat: ChatClient, model: str, tools: list[str]) -> tuple[float, list[float]]:
    """Run one turn through the API; return ms from the POST to the stream's end, and phases."""
    conversation = chat.new_conversation()
    started = time.perf_counter()
    turn = chat.start(conversation, "hi", model, generation={"tools": tools})
    posted = time.perf_counter()
    reader = EventReader(chat, turn["turn"]["id"])
    reader.run()  # in this thread: the stream ends with the turn
    elapsed = (reader.ended_at - started) * 1000
    assert reader.names()[-1] == "turn.completed", reader.names()
    marks = [started, posted]
    if tools:
        marks += [reader.first(name) for _label, name in PHASES[1:]]
    phases = [(b - a) * 1000 for a, b in zip(marks, marks[1:], strict=False)]
    return elapsed, phases


def inline_turn(provider: OpenAICompatibleProvider, tool: Any, use_tool: bool) -> float:
    """Make the calls of one turn in this process and return the ms they took."""
    started = time.perf_counter()
    specs = [ToolSpec(tool.name, tool.description, tool.json_schema())] if use_tool else None
    history = [StoredMessage("user", [{"type": "text", "text": "hi"}])]
    parts: list[dict[str, Any]] = []
    for _step in range(3):
        messages = build_messages(
            [*history, StoredMessage("assistant", parts)], lambda name: False, 60000, "Lookout"
        )
        calls, text = [], ""
        for event in provider.stream("tooly", messages, specs):
            if isinstance(event, ToolCallRequest):
                calls.append(event)
            elif isinstance(event, TextDelta):
                text += event.text
        if not calls:
            parts.append({"type": "text", "text": text})
            break
        for call in calls:
            ctx, _cited = tool_context_for_test()
            output = tool.execute(tool.validate_input(call.arguments), ctx)
            parts.append({"type": "tool-call", "id": call.id, "name": call.name, "input": {}})
            parts.append(
                {"type": "tool-result", "callId": call.id, "name": call.name, "output": output}
            )
        specs = None
    elapsed = (time.perf_counter() - started) * 1000
    assert parts[-1] == {"type": "text", "text": "Done."}, parts
    return elapsed


def run(turns: int, warmup: int, database: str) -> str:
    """Time both sides, interleaved, and return the Markdown report."""
    tool = start_plugin(bench_plugins.plugin, {})["noop"]
    timings: dict[tuple[str, str], list[float]] = {}
    phases: list[list[float]] = []
    with Stack(database=database) as stack, FakeModelProcess("tool", "--tool", "noop") as fake:
        model = stack.add_provider(fake.base_url)
        chat = stack.chat()
        provider = OpenAICompatibleProvider("fake", fake.base_url, "sk-bench")
        for index in range(warmup + turns):
            for kind, tools in (("tool", ["noop"]), ("text", [])):
                cpu, commands = stack.worker_cpu_seconds(), redis_commands(stack)
                queued, marks = queued_turn(chat, model, tools)
                cpu = (stack.worker_cpu_seconds() - cpu) * 1000
                commands = redis_commands(stack) - commands
                inline = inline_turn(provider, tool, use_tool=bool(tools))
                if index >= warmup:
                    if tools:
                        phases.append(marks)
                    timings.setdefault((kind, "queued"), []).append(queued)
                    timings.setdefault((kind, "inline"), []).append(inline)
                    timings.setdefault((kind, "cpu"), []).append(cpu)
                    timings.setdefault((kind, "commands"), []).append(commands)
        provider.close()
    return report(timings, phases, turns, database)


Timings = dict[tuple[str, str], list[float]]


def redis_commands(stack: Stack) -> int:
    """Return how many commands the stack's Redis has run, its INFO calls left out."""
    stats = stack.app.extensions["lookout_redis"].info("commandstats")
    return sum(v["calls"] for k, v in stats.items() if k != "cmdstat_info")


def report(timings: Timings, phases: list[list[float]], turns: int, database: str) -> str:
    """Return the table of medians and p95s, and what the queue adds per turn and per step."""
    rows = []
    for kind, steps in (("tool", 3), ("text", 1)):
        queued, inline = timings[(kind, "queued")], timings[(kind, "inline")]
        q50, q95 = summary(queued)
        i50, i95 = summary(inline)
        added = [q - i for q, i in zip(queued, inline, strict=True)]
        a50, a95 = summary(added)
        label = "1 tool call (2 model steps + 1 tool step)" if steps == 3 else "text only (1 step)"
        cpu, commands = (statistics.mean(timings[(kind, what)]) for what in ("cpu", "commands"))
        rows.append([label, q50, q95, i50, i95, a50, a95, a50 / steps, a95 / steps, cpu, commands])
    marginal = summary(timings[("tool", "queued")])[0] - summary(timings[("tool", "inline")])[0]
    marginal -= summary(timings[("text", "queued")])[0] - summary(timings[("text", "inline")])[0]
    header = [
        "turn", "queued p50 ms", "queued p95 ms", "inline p50 ms", "inline p95 ms",
        "added p50 ms", "added p95 ms", "added per step p50", "added per step p95",
        "worker CPU ms per turn", "Redis commands per turn",
    ]  # fmt: skip
    return "\n".join(
        [
            f"Dispatch overhead, {turns} turns of each kind, database {database}; {machine()}",
            "",
            table(header, rows),
            "",
            f"Marginal cost of the 2 extra steps of a tool turn (median added, tool turn minus "
            f"text turn) / 2 = {marginal / 2:.1f} ms per step.",
            "",
            "Where a queued tool turn's time goes (as seen by the client):",
            "",
            table(
                ["phase", "p50 ms", "p95 ms"],
                [[label, *summary([p[i] for p in phases])] for i, (label, _) in enumerate(PHASES)],
            ),
        ]
    )


def main() -> None:
    """Parse the flags, run, print the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=30, help="timed turns of each kind")
    parser.add_argument("--warmup", type=int, default=3, help="untimed turns first")
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    args = parser.parse_args()
    print(run(args.turns, args.warmup, args.database))


if __name__ == "__main__":
    main()
