"""CPU per turn, by part: what the workers and the web spend on one turn, next to Celery's own
no-op task.

Run from the project root: ``.venv/bin/python -m bench.turn_cpu [--turns 40] [--database
sqlite|postgres] [--page PAGE.html.gz]``.

One stack (bench/harness.py: a private Redis, the database, one worker process with 8 threads,
gunicorn as ./run serves it), turns one at a time so that CPU time, not the machine's load,
is what is counted. Each kind of turn runs ``--turns`` times after three warm-ups; a part's
CPU per turn is its processes' CPU time over the kind's turns (user and system, children
included: the worker's parser processes) divided by their count:

- ``ping``: Celery's no-op task (``workers.health.ping``), sent and awaited: the floor.
- ``text, 1 token`` and ``text, 50 tokens``: a text turn whose model streams 1 or 50 tokens
  over ``--seconds`` (each token its own read, as from a real server); their difference over
  49 is the cost of a streamed token.
- ``fetch``: the model asks for ``web_fetch`` of a page on 127.0.0.1 (``--page``, a 50 KB
  article of the shared extraction set by default), then streams 50 tokens; beside it the
  page's extraction alone (``tools.web_fetch.extract.extract``, in this process, median).

The web's CPU per turn is gunicorn's for the POST and the turn's event stream (read to its
end); the conversation is made before the clock starts.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import tempfile
import time
from pathlib import Path

import requests

from bench.harness import ROOT, EventReader, FakeModelProcess, Stack, machine, table
from bench.load import PageServer
from core import broker
from tests.support.chat import ChatClient

# A news article of 50.7 KB from the shared extraction set (bench/extraction.py reads the same
from webapp import queue

# folder, but importing it needs its peers installed).
PAGE = (
    ROOT.parent / "shared" / "bench" / "extraction" / "html"
    / "7916ecca969ffdd8f6fc32d171fbe0dd63db40fe4c1d2ade02b1dec5929a162f.html.gz"
)  # fmt: skip
WARMUP = 3


def cpu(stack: Stack) -> tuple[float, float]:
    """Return the CPU seconds the workers and the web have used so far."""
    return stack.worker_cpu_seconds(), stack.web_cpu_seconds() or 0.0


def per_turn(stack: Stack, turns: int, run_one) -> tuple[float, float]:
    """Run ``run_one`` ``turns`` times after the warm-ups; return the worker's and the web's
    CPU ms per run."""
    for _ in range(WARMUP):
        run_one()
    worker, web = cpu(stack)
    for _ in range(turns):
        run_one()
    worker_after, web_after = cpu(stack)
    return (worker_after - worker) * 1000 / turns, (web_after - web) * 1000 / turns


def turn_runner(stack: Stack, chat: ChatClient, model: str, tools: list[str]):
    """Return a function running one turn through the API and reading its stream to the end."""
    conversations: list[str] = []

    def run_one() -> None:
        conversation = conversations.pop() if conversations else chat.new_conversation()
        turn = chat.start(conversation, "hi", model, generation={"tools": tools})
        reader = EventReader(chat, turn["turn"]["id"])
        reader.run()
        assert reader.names()[-1] == "turn.completed", reader.names()

    def prepare(count: int) -> None:
        conversations.extend(chat.new_conversation() for _ in range(count))

    run_one.prepare = prepare
    return run_one


def measure_kind(stack: Stack, turns: int, fake_args: list[str], tools: list[str]):
    """Return (worker ms, web ms) per turn of one kind, with its own fake model."""
    with FakeModelProcess(*fake_args) as fake:
        model = stack.add_provider(fake.base_url)
        chat = stack.chat()
        run_one = turn_runner(stack, chat, model, tools)
        run_one.prepare(turns + WARMUP)
        return per_turn(stack, turns, run_one)


def extraction_ms(html: str, url: str, rounds: int = 15) -> float:
    """Return the median CPU ms of extracting the page in this process."""
    from tools.web_fetch.extract import extract

    times = []
    for _ in range(rounds):
        started = time.process_time()
        extract(html, url)
        times.append((time.process_time() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    """Measure each kind of turn on one stack and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=0.5, help="the answer's streaming time")
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--page", type=Path, default=PAGE)
    args = parser.parse_args()
    header = machine()
    directory = Path(tempfile.mkdtemp(prefix="lookout-bench-cpu-"))
    stack = Stack(
        database=args.database,
        concurrency=8,
        plugins="bench.bench_plugins,tools.web_fetch",
        web="gunicorn",
        web_threads=16,
    )
    rows = []
    with stack, PageServer(directory, args.page) as pages:
        # gunicorn listens before its workers have loaded the app: wait for one to answer.
        requests.get(stack.web.url + "/healthz", timeout=300)
        with stack.app.app_context():
            client = queue.get_client()

            def ping() -> None:
                client.send_task(broker.PING).get(timeout=60)

            worker, _web = per_turn(stack, args.turns, ping)
        rows.append(["ping (Celery's no-op task)", worker, "–"])
        stream = ["stream", "--seconds", str(args.seconds), "--tokens"]
        one = measure_kind(stack, args.turns, [*stream, "1"], [])
        rows.append(["text, 1 token", *one])
        fifty = measure_kind(stack, args.turns, [*stream, "50"], [])
        rows.append(["text, 50 tokens", *fifty])
        fetch_args = ["tool", "--tool", "web_fetch", "--arguments", json.dumps({"url": pages.url}),
                      "--answer-tokens", "50", "--answer-seconds", str(args.seconds)]  # fmt: skip
        fetch = measure_kind(stack, args.turns, fetch_args, ["web_fetch"])
        rows.append(["fetch of one page + 50 tokens", *fetch])
        html = gzip.decompress(args.page.read_bytes()).decode("utf-8", "replace")
        extracted = extraction_ms(html, pages.url)
    token_us = (fifty[0] - one[0]) / 49 * 1000
    print(f"CPU per turn, {args.turns} turns of each kind one at a time, {args.database}; {header}")
    print()
    print(table(["kind", "worker CPU ms per turn", "web CPU ms per turn"], rows))
    print()
    print(f"worker CPU per streamed token: {token_us:.0f} µs; 50-token text turn ÷ ping: "
          f"{fifty[0] / rows[0][1]:.1f}; the page's extraction alone: {extracted:.1f} ms "
          f"(fetch turn − 50-token text turn: {fetch[0] - fifty[0]:.1f} ms)")  # fmt: skip


if __name__ == "__main__":
    main()
