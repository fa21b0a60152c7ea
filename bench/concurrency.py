"""Concurrency: many turns at once on the workers, against a model that streams for 2 s.

Run from the project root:
``.venv/bin/python -m bench.concurrency [--turns 200] [--database sqlite|postgres|both]
[--processes N] [--web werkzeug|gunicorn] [--entry api|queue]``.

``--processes`` worker processes (threads pool, ``--concurrency`` threads each, default enough
for every turn) answer ``--turns`` text turns started together; the fake model runs in its own
process and streams ``--tokens`` tokens over ``--seconds`` to each. With ``--entry api`` 200
client threads POST their turns at once and read the event streams, through the werkzeug
server in this process or gunicorn as production runs it (``--web``); with ``--entry queue``
the turns are stored and queued directly, leaving the web side out, so the figures are the
workers' alone.

Reported: whether all completed; the time each added over the model's stream, seen by the
client (POST sent to stream ended) and by the database (created, or queued with ``--entry
queue``, to finished); the wait in the queue (created to started); how long POSTs took and how
long after the turn's end its stream ended; the workers' resident memory, idle and at its
peak; and the CPU time each part used per turn (workers, web, model, this process).
"""

from __future__ import annotations

import argparse
import threading
import time

import psutil
from sqlalchemy import func

from bench.harness import (
    EventReader,
    FakeModelProcess,
    Stack,
    machine,
    process_tree_cpu_seconds,
    summary,
    table,
)
from core import broker
from core.extensions import db
from core.models import Message, Turn
from core.models.base import aware
from tests.support.chat import ChatClient
from webapp import queue


class Sampler(threading.Thread):
    """Samples the worker's memory every 100 ms until stopped; keeps the peak."""

    def __init__(self, stack: Stack) -> None:
        super().__init__(daemon=True)
        self.stack = stack
        self.peak = 0.0
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(0.1):
            self.peak = max(self.peak, self.stack.worker_rss_mib())


def cpu_seconds(stack: Stack, fake: FakeModelProcess) -> dict[str, float]:
    """Return the CPU seconds used so far by each part: workers, API, model, this process.

    With the API in werkzeug, "bench" holds the API and the clients together.
    """
    times = psutil.Process().cpu_times()
    parts = {
        "worker": stack.worker_cpu_seconds(),
        "model": process_tree_cpu_seconds(fake.process.pid),
        "bench": times.user + times.system,
    }
    web = stack.web_cpu_seconds()
    if web is not None:
        parts["web"] = web
    return parts


def one_turn(chat: ChatClient, conversation: str, model: str, barrier, out: dict) -> None:
    """Start a turn when every thread is ready, read its stream to the end, note the times."""
    barrier.wait()
    posted = time.perf_counter()
    try:
        started = chat.start(conversation, "hi", model, generation={"tools": []})
        answered = time.perf_counter()
        reader = EventReader(chat, started["turn"]["id"], timeout=120)
        reader.run()
        out.update(
            turn=started["turn"]["id"],
            ms=(reader.ended_at - posted) * 1000,
            post_ms=(answered - posted) * 1000,
            ended=time.time() - (time.perf_counter() - reader.ended_at),
            end=reader.names()[-1],
        )
    except Exception as exc:  # noqa: BLE001 - counted as unfinished and shown
        out.update(error=repr(exc))


open_turn = Turn.status.in_(("queued", "running"))


def queue_directly(stack: Stack, conversations: list[str], model: str, results: list[dict]):
    """Store the turns as the API does, then queue them all as fast as one thread can.

    Leaves the web side out, so the figures are the workers' alone. Each turn's "sent" is when
    its task was sent; its end is read from the database.
    """
    with stack.app.app_context():
        turns = []
        for conversation_id in conversations:
            message = Message(
                conversation_id=conversation_id,
                role="user",
                parts=[{"type": "text", "text": "hi"}],
                status="completed",
            )
            db.session.add(message)
            db.session.flush()
            turn = Turn(
                conversation_id=conversation_id,
                user_message_id=message.id,
                model=model,
                generation={"tools": []},
                roles=["user"],
                status="queued",
            )
            db.session.add(turn)
            turns.append(turn)
        db.session.commit()
        ids = [turn.id for turn in turns]
        for turn_id, out in zip(ids, results, strict=True):
            out.update(turn=turn_id, sent=time.time())
            queue.enqueue(broker.RUN_TURN_STEP, turn_id, 0)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if db.session.scalar(db.select(func.count()).where(Turn.id.in_(ids), open_turn)) == 0:
                break
            db.session.rollback()
            time.sleep(0.05)
        for out in results:
            out.update(end="turn.completed")  # judged from the stored status below


def run_once(
    turns: int,
    concurrency: int,
    database: str,
    tokens: int,
    seconds: float,
    processes: int = 1,
    web: str = "werkzeug",
    entry: str = "api",
) -> dict:
    """Run one round on one database and return its figures."""
    model_args = ("stream", "--tokens", str(tokens), "--seconds", str(seconds))
    stack = Stack(database=database, concurrency=concurrency, processes=processes, web=web)
    with stack, FakeModelProcess(*model_args) as fake:
        model = stack.add_provider(fake.base_url)
        owner = stack.chat()
        warm = owner.start(owner.new_conversation(), "warm up", model, generation={"tools": []})
        owner.wait(warm["turn"]["id"], timeout=60)
        conversations = [owner.new_conversation() for _ in range(turns)]
        idle = stack.worker_rss_mib()
        sampler = Sampler(stack)
        sampler.start()
        barrier = threading.Barrier(turns)
        results: list[dict] = [{} for _ in range(turns)]
        threads = [
            threading.Thread(
                target=one_turn,
                args=(ChatClient(owner.base_url, owner.token), conversation, model, barrier, out),
            )
            for conversation, out in zip(conversations, results, strict=True)
        ]
        if entry == "queue":
            threads = [
                threading.Thread(target=queue_directly, args=(stack, conversations, model, results))
            ]
        cpu_before = cpu_seconds(stack, fake)
        began = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
        wall = time.perf_counter() - began
        cpu_after = cpu_seconds(stack, fake)
        cpu = {part: cpu_after[part] - cpu_before[part] for part in cpu_after}
        sampler.stopping.set()
        sampler.join()
        ids = [r["turn"] for r in results if "turn" in r]
        with stack.app.app_context():
            rows = db.session.scalars(db.select(Turn).where(Turn.id.in_(ids))).all()
            stored = {
                row.id: (row.status, row.created_at, row.started_at, row.finished_at)
                for row in rows
            }
    completed = [
        r
        for r in results
        if r.get("end") == "turn.completed" and stored.get(r["turn"], ("",))[0] == "completed"
    ]
    server = [
        (aware(stored[r["turn"]][3]).timestamp() - r["sent"]) * 1000
        if "sent" in r
        else (stored[r["turn"]][3] - stored[r["turn"]][1]).total_seconds() * 1000
        for r in completed
    ]
    queued = [
        (started - created).total_seconds() * 1000
        for status, created, started, _finished in stored.values()
        if started is not None
    ]
    lag = [
        (r["ended"] - aware(stored[r["turn"]][3]).timestamp()) * 1000
        for r in completed
        if "ended" in r
    ]
    failures = sorted({r.get("error") or r.get("end") or "" for r in results} - {"turn.completed"})
    failures += sorted({s for s, *_ in stored.values()} - {"completed"})
    return {
        "database": database,
        "completed": len(completed),
        "client": [r["ms"] - seconds * 1000 for r in completed if "ms" in r],
        "server": [ms - seconds * 1000 for ms in server],
        "queued": queued,
        "post": [r["post_ms"] for r in completed if "post_ms" in r],
        "lag": lag,
        "idle": idle,
        "peak": sampler.peak,
        "wall": wall,
        "cpu_ms": {part: seconds * 1000 / turns for part, seconds in cpu.items()},
        "failures": failures,
    }


def report(
    rounds: list[dict], turns: int, concurrency: int, tokens: int, seconds: float, processes: int
) -> str:
    """Return the Markdown table of every round."""
    header = [
        "database", "completed", "client added p50 ms", "client added p95 ms",
        "server added p50 ms", "server added p95 ms", "queue wait p95 ms",
        "worker RSS idle MiB", "worker RSS peak MiB", "worker CPU ms per turn", "wall s",
    ]  # fmt: skip
    rows = []
    for r in rounds:
        rows.append(
            [
                r["database"], f"{r['completed']}/{turns}", *summary(r["client"]),
                *summary(r["server"]), summary(r["queued"])[1], r["idle"], r["peak"],
                r["cpu_ms"]["worker"], r["wall"],
            ]
        )  # fmt: skip
    lines = [
        f"Concurrency: {turns} turns at once, {processes} worker process(es) with {concurrency} "
        "threads each, model "
        f"streaming {tokens} tokens over {seconds:g} s; {machine()}",
        "",
        table(header, rows),
    ]
    for r in rounds:
        parts = ", ".join(f"{part} {ms:.1f}" for part, ms in r["cpu_ms"].items())
        post, lag = summary(r["post"]), summary(r["lag"])
        lines += [
            "",
            f"{r['database']}: POST answered p50 / p95 ms: {post[0]:.0f} / {post[1]:.0f}; "
            f"stream ended after the turn did p50 / p95 ms: {lag[0]:.0f} / {lag[1]:.0f}",
            "",
            f"{r['database']}: CPU ms per turn by part: {parts}",
        ]
    for r in rounds:
        if r["failures"]:
            lines += ["", f"{r['database']}: did not complete: " + "; ".join(r["failures"])[:2000]]
    return "\n".join(lines)


def main() -> None:
    """Parse the flags, run each database's round, print the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--concurrency", type=int, help="worker threads; default: --turns")
    parser.add_argument("--database", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--tokens", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--processes", type=int, default=1, help="worker processes (same queue)")
    parser.add_argument(
        "--web",
        choices=["werkzeug", "gunicorn"],
        default="werkzeug",
        help="serve the API in the benchmark's process (werkzeug) or as production does",
    )
    parser.add_argument(
        "--entry",
        choices=["api", "queue"],
        default="api",
        help="start turns through the HTTP API and read their streams (api), or store and queue "
        "them directly, leaving the web side out (queue)",
    )
    args = parser.parse_args()
    concurrency = args.concurrency or -(-args.turns // args.processes)
    databases = ["sqlite", "postgres"] if args.database == "both" else [args.database]
    rounds = [
        run_once(
            args.turns,
            concurrency,
            database,
            args.tokens,
            args.seconds,
            args.processes,
            args.web,
            args.entry,
        )
        for database in databases
    ]
    print(report(rounds, args.turns, concurrency, args.tokens, args.seconds, args.processes))


if __name__ == "__main__":
    main()
