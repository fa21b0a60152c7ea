"""A model step's fixed cost in one process: the CPU, database statements and Redis commands of
a text turn's one step, without Celery's delivery, the web or other processes' noise.

Run from the project root: ``.venv/bin/python -m bench.step_cpu [--steps 200] [--rounds 5]
[--profile 20]``.

A private Redis, a migrated SQLite database, and a fake model in a process of its own that
answers each call with one token at once. Each step is a turn stored as the web stores it
(``lifecycle.store_turn``, its queued marker set as a publish sets it), run as the worker runs
it (``run_turn_step.apply``: the task's app context, its queued marker cleared, the claim, the
reads, the model call, the ending). The figure is this process's CPU per step (every thread:
the cancel watcher's too), a round of ``--steps`` steps at a time; beside it the statements
sent to the database, the commits and the Redis commands per step (the server's
``INFO commandstats``: the watcher's polls included). ``--bookkeeping`` replaces the model
call (``stream_reply``) with a stub that answers one word at once and publishes nothing, to
count the step's own work alone. ``--profile N`` prints cProfile's top
``N`` entries of one more round, by cumulative CPU time of this thread (the step's).
``--after-call`` runs a fetch turn's second step instead: each turn offers ``web_fetch``, its
first step is claimed and has stored a ``web_fetch`` call with its result (a part of the
extracted ``--page``) and a citation, and the measured step is step 1 (it reads the reply's
records, writes the result into the reply, cites, offers the tool and answers).
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

from sqlalchemy import event

from bench.harness import FakeModelProcess, machine, make_bench_app, table
from core.extensions import db, get_redis
from core.models import Conversation, Message, Provider, User
from core.turn import lifecycle, queued
from core.turn.parts import text_part
from tests.support.fetched_turns import store_fetched_call
from tests.support.redis_server import RedisServer

PLUGINS = "bench.bench_plugins,tools.web_fetch"
PAGE = Path(
    "/work/shared/bench/extraction/html/"
    "7916ecca969ffdd8f6fc32d171fbe0dd63db40fe4c1d2ade02b1dec5929a162f.html.gz"
)
PAGE_URL = "http://127.0.0.1:9/article"


class Counts:
    """Statements and commits sent on the app's engine."""

    def __init__(self, engine) -> None:
        self.statements = 0
        self.commits = 0
        event.listen(engine, "before_cursor_execute", self._statement)
        event.listen(engine, "commit", self._commit)

    def _statement(self, *_args) -> None:
        self.statements += 1

    def _commit(self, *_args) -> None:
        self.commits += 1


def redis_calls() -> dict[str, int]:
    """Return the calls of each Redis command so far."""
    stats = get_redis().info("commandstats")
    return {name.removeprefix("cmdstat_"): value["calls"] for name, value in stats.items()}


def fetched_output(page: Path) -> dict:
    """Return ``web_fetch``'s output for the first part of ``page`` (gzipped HTML), as the
    tool stores it."""
    import gzip

    from tools.web_fetch.extract import extract
    from tools.web_fetch.tool import Page, part_of

    extracted = extract(gzip.decompress(page.read_bytes()).decode("utf-8", "replace"), PAGE_URL)
    return part_of(Page(PAGE_URL, extracted.title, extracted.text), 0, 20_000)


def called_turns(owner: str, model: str, count: int, output: dict) -> list[str]:
    """Store ``count`` turns offering ``web_fetch`` whose first step is claimed and stored a
    ``web_fetch`` call with its result and one citation, each marked queued for step 1 as the
    last call's dispatch would mark it."""
    ids = stored_turns(owner, model, count, {"tools": ["web_fetch"]}, mark=False)
    for turn_id in ids:
        store_fetched_call(turn_id, output, output.get("title"))
    return ids


def stored_turns(
    owner: str, model: str, count: int, generation: dict | None = None, mark: bool = True
) -> list[str]:
    """Store ``count`` queued turns, each a new conversation's first, as the web stores them
    (past its limits on turns running at once: none of these runs yet), each marked queued as
    its publish would mark it (unless not ``mark``)."""
    ids = []
    for _ in range(count):
        conversation = Conversation(owner_id=owner, title="bench")
        db.session.add(conversation)
        db.session.commit()
        asked = Message(
            conversation_id=conversation.id, role="user", parts=[text_part("hi")],
            status="completed",
        )  # fmt: skip
        turn = lifecycle.store_turn(conversation, asked, model, generation or {"tools": []}, [])
        if mark:
            queued.mark_queued(turn.id, queued.step_work(0), str(uuid.uuid4()))
        ids.append(turn.id)
    return ids


def without_the_model() -> None:
    """Make every step's model call a stub that says one word at once, publishing nothing:
    what is left is the step's own bookkeeping (``--bookkeeping``)."""
    from workers import steps, streaming

    def said(*_args, **_kwargs) -> streaming.Reply:
        reply = streaming.Reply()
        reply.text = "tok"
        return reply

    steps.stream_reply = said


def run_steps(turn_ids: list[str], step: int = 0) -> None:
    """Run each turn's step ``step`` as the worker runs it; every turn must complete."""
    from workers.steps import run_turn_step

    for turn_id in turn_ids:
        run_turn_step.apply(args=(turn_id, step))


def main(argv: list[str] | None = None) -> None:
    """Measure and print a step's CPU, statements and Redis commands."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", type=int, default=0, help="cProfile's top N entries")
    parser.add_argument(
        "--bookkeeping", action="store_true", help="no model call: a stub answers at once"
    )
    parser.add_argument("--dump", help="with --profile: write the profile's stats to this file")
    parser.add_argument(
        "--seconds", type=float, default=0.0,
        help="the fake model's time to its one token (the stack's bench.turn_cpu waits 0.5 s)",
    )  # fmt: skip
    parser.add_argument(
        "--after-call", action="store_true",
        help="a fetch turn's second step: after a stored web_fetch call with its result",
    )  # fmt: skip
    parser.add_argument("--page", type=Path, default=PAGE, help="with --after-call")
    args = parser.parse_args(argv)
    header = machine()
    if args.bookkeeping:
        without_the_model()
    folder = Path(tempfile.mkdtemp(prefix="lookout-bench-step-"))
    fake_args = ("stream", "--tokens", "1", "--seconds", str(args.seconds))
    with RedisServer() as redis_server, FakeModelProcess(*fake_args) as fake:
        app = make_bench_app(
            folder, redis_server.url, LOOKOUT_PLUGINS=PLUGINS, ALLOW_PRIVATE_NETWORKS=True,
            CELERY_QUEUE=f"lookout-bench-{uuid.uuid4().hex[:8]}",
        )  # fmt: skip
        from workers import celery_app

        celery_app._flask_app = app  # the app a task's context is of: this process's one
        with app.app_context():
            db.session.add(
                Provider(
                    name="fake",
                    base_url=fake.base_url,
                    api_key="sk-bench",
                    models=[{"name": "m", "tools": True}],
                )  # fmt: skip
            )
            user = User.make("bench", "password")
            db.session.add(user)
            db.session.commit()
            owner = user.id
            counts = Counts(db.engine)
            step = 1 if args.after_call else 0
            if args.after_call:
                output = fetched_output(args.page)

                def turns(count: int) -> list[str]:
                    return called_turns(owner, "fake/m", count, output)
            else:

                def turns(count: int) -> list[str]:
                    return stored_turns(owner, "fake/m", count)

            run_steps(turns(5), step)  # warm: imports, plugins, connections
            cpu: list[float] = []
            statements = commits = 0
            calls: dict[str, int] = {}
            for _ in range(args.rounds):
                turn_ids = turns(args.steps)
                db.session.remove()
                before = (counts.statements, counts.commits, redis_calls())
                started = time.process_time()
                run_steps(turn_ids, step)
                cpu.append((time.process_time() - started) * 1000 / args.steps)
                after = redis_calls()
                statements += counts.statements - before[0]
                commits += counts.commits - before[1]
                for name, value in after.items():
                    calls[name] = calls.get(name, 0) + value - before[2].get(name, 0)
            done = db.session.scalar(
                db.text("SELECT count(*) FROM turns WHERE status = 'completed'")
            )
            profile = ""
            if args.profile:
                turn_ids = turns(args.steps)
                db.session.remove()
                profiler = cProfile.Profile(time.thread_time)
                profiler.runcall(run_steps, turn_ids, step)
                if args.dump:
                    profiler.dump_stats(args.dump)
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(
                    args.profile
                )
                profile = out.getvalue()
    steps = args.steps * args.rounds
    commands = {k: v / steps for k, v in sorted(calls.items()) if k != "info" and v}
    kind = "A fetch turn's second step's" if args.after_call else "A text step's"
    print(f"{kind} CPU in one process, {args.rounds} rounds of {args.steps}; {header}")
    print()
    print(table(["figure", "per step"], [
        ["CPU ms, median of the rounds", f"{statistics.median(cpu):.2f}"],
        ["CPU ms, each round", " ".join(f"{c:.2f}" for c in cpu)],
        ["database statements", f"{statements / steps:.2f}"],
        ["commits", f"{commits / steps:.2f}"],
        ["Redis commands", f"{sum(commands.values()):.2f}"],
    ]))  # fmt: skip
    print()
    print("Redis commands per step: " + ", ".join(f"{k} {v:.2f}" for k, v in commands.items()))
    print(f"turns completed: {done} of {steps + 5 + (args.steps if args.profile else 0)}")
    if profile:
        print(profile)


if __name__ == "__main__":
    main()
