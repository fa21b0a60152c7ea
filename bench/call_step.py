"""A tool round in one process: the tool call's task and the model step after it, as two tasks
(the call sends the step, which is then delivered) beside one (the call's task runs the step).

Run from the project root: ``.venv/bin/python -m bench.call_step [--turns 50] [--rounds 4]
[--profile 25]``.

A private Redis, a migrated SQLite database, and a fake model in a process of its own that asks
for one ``noop`` call and then answers "Done." at once. Each turn is stored as the web stores
it and its step 0 run as the worker runs it (``run_turn_step.apply``: the model asks for the
call, the call is stored and its task published to a queue nobody reads). What is measured is
the rest of the turn, a round of ``--turns`` turns at a time, the two ways alternating: "sent",
``run_tool_call.apply`` with its next step sent (``fanout.send_next_step``, as before this
change) and then that step's task run (``run_turn_step.apply``, its queued marker cleared as
its delivery would), and "here", ``run_tool_call.apply`` running the step itself. Celery's
consumer (the delivery, the acknowledgement) is not in either figure: "sent" pays it twice a
tool round in a worker, "here" once. Per tool round: this process's CPU, Celery publishes,
database statements and Redis commands (``INFO commandstats``, the watcher's reads included).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from celery.signals import after_task_publish
from flask import Flask
from sqlalchemy import update

from bench.harness import FakeModelProcess, machine, make_bench_app, table
from bench.step_cpu import Counts, redis_calls, stored_turns
from core.broker import client_settings
from core.extensions import db
from core.models import Provider, ToolCall, Turn, User

PLUGINS = "bench.bench_plugins"
MODES = ("sent", "here")


class Publishes:
    """Celery tasks this process published, by name."""

    def __init__(self) -> None:
        self.names: list[str] = []
        after_task_publish.connect(self._published, weak=False)

    def _published(self, sender: str | None = None, **_kwargs: object) -> None:
        self.names.append(sender or "")


def called_turns(owner: str, count: int, tool: str = "noop") -> list[tuple[str, str]]:
    """Store ``count`` turns offered ``tool`` and run each one's step 0 (the model asks for the
    call); return (turn id, call id) of each."""
    from workers.steps import run_turn_step

    turn_ids = stored_turns(owner, "fake/tooly", count)  # as the web stores them, no tools
    db.session.execute(
        update(Turn).where(Turn.id.in_(turn_ids)).values(generation={"tools": [tool]})
    )
    db.session.commit()
    found = []
    for turn_id in turn_ids:
        run_turn_step.apply(args=(turn_id, 0))
        call_id = db.session.scalar(db.select(ToolCall.call_id).filter_by(turn_id=turn_id))
        db.session.remove()
        found.append((turn_id, call_id))
    return found


def run_rounds(turns: list[tuple[str, str]], mode: str) -> None:
    """Run each turn's call and the step after it, ``mode``'s way."""
    from workers import fanout, toolcalls
    from workers.steps import run_turn_step

    here = toolcalls.run_next_step
    if mode == "sent":
        toolcalls.run_next_step = lambda turn_id, step, call_id: fanout.send_next_step(
            turn_id, step
        )
    try:
        for turn_id, call_id in turns:
            toolcalls.run_tool_call.apply(args=(turn_id, call_id))
            if mode == "sent":
                run_turn_step.apply(args=(turn_id, 1))
    finally:
        toolcalls.run_next_step = here


def task_app(folder: Path, redis_url: str, plugins: str = PLUGINS, **config: object) -> Flask:
    """Return the bench's app (``plugins`` loaded, ``config`` on top), made the one whose
    context this process's tasks run in and whose Redis they publish to."""
    from workers import celery_app

    queue = f"lookout-bench-{uuid.uuid4().hex[:8]}"
    app = make_bench_app(folder, redis_url, LOOKOUT_PLUGINS=plugins, CELERY_QUEUE=queue, **config)
    celery_app._flask_app = app
    # The tasks this process publishes go to its own Redis, not the environment's broker.
    celery_app.celery.conf.update(client_settings(app.config))
    return app


def stored_owner(base_url: str) -> str:
    """Store the fake model's provider ("fake/tooly") and a user; return the user's id."""
    user = User.make("bench", "password")
    model = {"name": "tooly", "tools": True}
    provider = Provider(name="fake", base_url=base_url, api_key="sk", models=[model])
    db.session.add_all([provider, user])
    db.session.commit()
    return user.id


def main(argv: list[str] | None = None) -> None:
    """Measure and print a tool round's CPU, publishes, statements and Redis commands."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=4, help="rounds of each way, alternating")
    parser.add_argument("--profile", type=int, default=0, help="cProfile's top N entries")
    args = parser.parse_args(argv)
    header = machine()
    folder = Path(tempfile.mkdtemp(prefix="lookout-bench-callstep-"))
    from tests.support.redis_server import RedisServer

    fake_args = ("tool", "--tool", "noop", "--arguments", "{}")
    with RedisServer() as redis_server, FakeModelProcess(*fake_args) as fake:
        app = task_app(folder, redis_server.url)
        with app.app_context():
            owner = stored_owner(fake.base_url)
            counts, publishes = Counts(db.engine), Publishes()
            for mode in MODES:  # warm: imports, plugins, connections
                run_rounds(called_turns(owner, 3), mode)
            cpu: dict[str, list[float]] = {mode: [] for mode in MODES}
            totals = {mode: [0, 0, 0] for mode in MODES}  # publishes, statements, commands
            by_name: dict[str, dict[str, int]] = {mode: {} for mode in MODES}
            rounds = [MODES[(i + i // 2) % 2] for i in range(2 * args.rounds)]  # s h h s s h …
            for mode in rounds:
                turns = called_turns(owner, args.turns)
                before = (len(publishes.names), counts.statements, redis_calls())
                started = time.process_time()
                run_rounds(turns, mode)
                cpu[mode].append((time.process_time() - started) * 1000 / args.turns)
                after = redis_calls()
                totals[mode][0] += len(publishes.names) - before[0]
                totals[mode][1] += counts.statements - before[1]
                for name, value in after.items():
                    if name != "info" and value > before[2].get(name, 0):
                        added = value - before[2].get(name, 0)
                        totals[mode][2] += added
                        by_name[mode][name] = by_name[mode].get(name, 0) + added
            done = db.session.scalar(
                db.select(db.func.count()).select_from(Turn).filter_by(status="completed")
            )
            profiles = {}
            for mode in MODES if args.profile else ():
                turns = called_turns(owner, args.turns)
                profiler = cProfile.Profile(time.thread_time)
                profiler.runcall(run_rounds, turns, mode)
                out = io.StringIO()
                stats = pstats.Stats(profiler, stream=out).sort_stats("cumulative")
                stats.print_stats(args.profile)
                profiles[mode] = out.getvalue()
    n = args.turns * args.rounds
    rows = [
        [label] + [f"{totals[m][index] / n:.2f}" for m in MODES]
        for label, index in (
            ("Celery publishes", 0), ("database statements", 1), ("Redis commands", 2)
        )
    ]  # fmt: skip
    rows.append(["CPU ms, median"] + [f"{statistics.median(cpu[m]):.2f}" for m in MODES])
    rows.append(["CPU ms, each round"] + [" ".join(f"{c:.2f}" for c in cpu[m]) for m in MODES])
    print(f"A tool round in one process, {args.rounds} rounds of {args.turns} each way; {header}")
    print()
    print(table(["per tool round", "sent (two tasks)", "here (one task)"], rows))
    print()
    for mode in MODES:
        each = sorted(by_name[mode].items())
        print(f"Redis commands, {mode}: " + ", ".join(f"{k} {v / n:.2f}" for k, v in each))
    print(f"turns completed: {done} (of {2 * n + 6})")
    for mode, text in profiles.items():
        print(f"\n{mode}:\n{text}")


if __name__ == "__main__":
    main()
