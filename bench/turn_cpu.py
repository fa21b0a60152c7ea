"""CPU per turn, by part: what the workers and the web spend on one turn, next to Celery's own
no-op task.

Run from the project root: ``.venv/bin/python -m bench.turn_cpu [--turns 40] [--pings 400]
[--database sqlite|postgres] [--page PAGE.html.gz] [--only text|fetch]``.

One stack (bench/harness.py: a private Redis, the database, one worker process with 8 threads,
gunicorn as ./run serves it), turns one at a time so that CPU time, not the machine's load,
is what is counted. Each kind of turn runs ``--turns`` times after three warm-ups; a part's
CPU per turn is its processes' CPU time over the kind's turns (user and system, children
included: the worker's parser processes) divided by their count. The CPU time is each
process's CPU clock (``clock_getcpuclockid``: the kernel's run time of all its threads, the
ended ones included, in ns), not ``/proc/PID/stat``'s 10 ms ticks, which made a 1 ms no-op
read 1.0 or 1.5 ms over 20 runs; a child process that ended is not counted (nor was it before):

- ``ping``: Celery's no-op task (``workers.health.ping``), sent and awaited ``--pings`` times:
  the floor.
- ``text, 1 token`` and ``text, 50 tokens``: a text turn whose model streams 1 or 50 tokens
  over ``--seconds`` (each token its own read, as from a real server); their difference over
  49 is the cost of a streamed token.
- ``fetch``: the model asks for ``web_fetch`` of a page on 127.0.0.1 (``--page``, a 50 KB
  article of the shared extraction set by default), then streams 50 tokens; beside it the
  page's extraction alone (``tools.web_fetch.extract.extract``, in this process, median).

The web's CPU per turn is gunicorn's for the POST and the turn's event stream (read to its
end); the conversation is made before the clock starts. ``--threads`` adds the worker
process's CPU per turn by thread (the kernel's run time of each, ``/proc/PID/task/*/schedstat``,
in ns): the main thread is Celery's consumer; ``py-spy dump --pid PID`` names the others (the
task threads, ``cancel-watch``, ``reaper``).
"""

from __future__ import annotations

import argparse
import ctypes
import gzip
import json
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import requests

from bench.harness import ROOT, EventReader, FakeModelProcess, Stack, _tree_sum, machine, table
from bench.load import PageServer
from core import broker
from tests.support.chat import ChatClient
from webapp import queue

# A news article of 50.7 KB from the shared extraction set (bench/extraction.py reads the same
# folder, but importing it needs its peers installed).
PAGE = (
    ROOT.parent / "shared" / "bench" / "extraction" / "html"
    / "7916ecca969ffdd8f6fc32d171fbe0dd63db40fe4c1d2ade02b1dec5929a162f.html.gz"
)  # fmt: skip
WARMUP = 3


def thread_cpu(pid: int) -> dict[int, float]:
    """Return each thread's CPU seconds so far (its run time on a CPU, by thread id)."""
    seconds = {}
    for tid in Path(f"/proc/{pid}/task").iterdir():
        try:
            seconds[int(tid.name)] = int((tid / "schedstat").read_text().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):  # a thread that ended meanwhile
            continue
    return seconds


def thread_ms(pid: int, before: dict[int, float], runs: int) -> str:
    """Return the CPU ms per run of each thread of ``pid`` since ``before``, busiest first,
    the main thread marked."""
    after = thread_cpu(pid)
    spent = {tid: (after[tid] - before.get(tid, 0.0)) * 1000 / runs for tid in after}
    busy = sorted((ms, tid) for tid, ms in spent.items() if ms >= 0.01)
    return ", ".join(f"{'main' if tid == pid else tid} {ms:.2f}" for ms, tid in reversed(busy))


# Filled by per_turn with --threads: (the kind, its worker's CPU ms per turn by thread).
THREADS: list[tuple[str, str]] = []


LIBC = ctypes.CDLL(None, use_errno=True)


def process_cpu_seconds(process: psutil.Process) -> float:
    """Return the CPU seconds ``process`` has used, all its threads' (ended ones included), to
    the ns: its CPU clock. ``/proc/PID/schedstat`` is the main thread's alone."""
    clock = ctypes.c_int()
    if LIBC.clock_getcpuclockid(process.pid, ctypes.byref(clock)) != 0:
        raise psutil.NoSuchProcess(process.pid)
    try:
        return time.clock_gettime(clock.value)
    except OSError as exc:  # it ended meanwhile
        raise psutil.NoSuchProcess(process.pid) from exc


def cpu(stack: Stack) -> tuple[float, float]:
    """Return the CPU seconds the workers and the web (their children included) have used."""
    assert stack.web.process is not None
    workers = sum(_tree_sum(pid, process_cpu_seconds) for pid in stack.worker_pids())
    return workers, _tree_sum(stack.web.process.pid, process_cpu_seconds)


def per_turn(
    stack: Stack, turns: int, run_one, clients: int = 1, label: str = ""
) -> tuple[float, float]:
    """Run ``run_one`` ``turns`` times after the warm-ups (``clients`` at a time, each round
    started together); return the worker's and the web's CPU ms per run. With ``label``, the
    worker's CPU per run by thread is added to THREADS."""
    for _ in range(WARMUP):
        run_one()
    pid = stack.worker.process.pid
    with ThreadPoolExecutor(clients) as pool:
        threads = thread_cpu(pid) if label else {}
        worker, web = cpu(stack)
        for _ in range(turns // clients if clients > 1 else turns):
            list(pool.map(lambda _: run_one(), range(clients)))
        worker_after, web_after = cpu(stack)
    runs = (turns // clients) * clients if clients > 1 else turns
    if label:
        THREADS.append((label, thread_ms(pid, threads, runs)))
    return (worker_after - worker) * 1000 / runs, (web_after - web) * 1000 / runs


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
    run_one.chat = chat
    return run_one


def measure_kind(
    stack: Stack,
    turns: int,
    fake_args: list[str],
    tools: list[str],
    clients: int = 1,
    label: str = "",
):
    """Return (worker ms, web ms) per turn of one kind, with its own fake model; ``clients``
    users at once, each with a turn at a time (a user's answers running at once are
    limited)."""
    with FakeModelProcess(*fake_args) as fake:
        model = stack.add_provider(fake.base_url)
        runners = [turn_runner(stack, stack.chat(), model, tools) for _ in range(clients)]
        for run_one in runners:
            run_one.prepare(max(1, turns // clients) + WARMUP)
        if clients == 1:
            return per_turn(stack, turns, runners[0], label=label)
        free = list(runners)

        def run_any() -> None:
            runner = free.pop()
            # a connection idle past gunicorn's keep-alive may be closed as it is reused
            runner.chat.session.close()
            try:
                runner()
            finally:
                free.append(runner)

        return per_turn(stack, max(turns, clients), run_any, clients)


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
    parser.add_argument(
        "--pings", type=int, default=400, help="no-op tasks: each costs about 1 ms of CPU"
    )
    parser.add_argument("--seconds", type=float, default=0.5, help="the answer's streaming time")
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--page", type=Path, default=PAGE)
    parser.add_argument(
        "--clients", type=int, default=128, help="turns at once, for the web-only figure"
    )
    parser.add_argument(
        "--web-only", action="store_true", help="only the text turns (the web's figures)"
    )
    parser.add_argument(
        "--only", choices=["text", "fetch"],
        help="text: the no-op task and the text turns alone (no fetch turn, no extraction); "
        "fetch: the no-op task, the fetch turn and the extraction alone",
    )  # fmt: skip
    parser.add_argument(
        "--worker-class", default="webapp.stream_worker.StreamingWorker",
        help="gunicorn's worker class for the web (gthread: each stream holds a thread)",
    )  # fmt: skip
    parser.add_argument(
        "--threads", action="store_true", help="the worker's CPU per turn by thread, too"
    )
    args = parser.parse_args()
    header = machine()
    directory = Path(tempfile.mkdtemp(prefix="lookout-bench-cpu-"))
    stack = Stack(
        database=args.database,
        concurrency=8,
        plugins="bench.bench_plugins,tools.web_fetch",
        web="gunicorn",
        web_threads=16,
        web_worker_class=args.worker_class,
    )
    rows = []
    with stack, PageServer(directory, args.page) as pages:
        # gunicorn listens before its workers have loaded the app: wait for one to answer.
        requests.get(stack.web.url + "/healthz", timeout=300)
        stream = ["stream", "--seconds", str(args.seconds), "--tokens"]
        if args.web_only:
            one = measure_kind(stack, args.turns, [*stream, "1"], [])
            fifty = measure_kind(stack, args.turns, [*stream, "50"], [])
            together = measure_kind(stack, args.turns, [*stream, "50"], [], args.clients)
            rows = [["text, 1 token", *one], ["text, 50 tokens", *fifty],
                    [f"text, 50 tokens, {args.clients} clients at once", *together]]  # fmt: skip
            print(f"Web CPU per turn, {args.turns} turns of each kind, {args.worker_class}; "
                  f"{machine()}")  # fmt: skip
            print()
            print(table(["kind", "worker CPU ms per turn", "web CPU ms per turn"], rows))
            return
        fifty = one = (0.0, 0.0)
        with stack.app.app_context():
            client = queue.get_client()

            def ping() -> None:
                client.send_task(broker.PING).get(timeout=60)

            label = "ping" if args.threads else ""
            worker, _web = per_turn(stack, args.pings, ping, label=label)
        rows.append(["ping (Celery's no-op task)", f"{worker:.2f}", "–"])
        ping_ms = worker
        if args.only != "fetch":
            label = "text, 1 token" if args.threads else ""
            one = measure_kind(stack, args.turns, [*stream, "1"], [], label=label)
            rows.append(["text, 1 token", *one])
            label = "text, 50 tokens" if args.threads else ""
            fifty = measure_kind(stack, args.turns, [*stream, "50"], [], label=label)
            rows.append(["text, 50 tokens", *fifty])
            if args.only == "text":
                print(f"CPU per turn, {args.turns} turns of each kind one at a time, "
                      f"{args.pings} pings, {args.database}; {header}")  # fmt: skip
                print()
                print(table(["kind", "worker CPU ms per turn", "web CPU ms per turn"], rows))
                print()
                print(f"worker CPU per streamed token: {(fifty[0] - one[0]) / 49 * 1000:.0f} µs; "
                      f"50-token text turn ÷ ping: {fifty[0] / ping_ms:.2f}")  # fmt: skip
                print_threads()
                return
        fetch_args = ["tool", "--tool", "web_fetch", "--arguments", json.dumps({"url": pages.url}),
                      "--answer-tokens", "50", "--answer-seconds", str(args.seconds)]  # fmt: skip
        fetch = measure_kind(stack, args.turns, fetch_args, ["web_fetch"])
        rows.append(["fetch of one page + 50 tokens", *fetch])
        html = gzip.decompress(args.page.read_bytes()).decode("utf-8", "replace")
        extracted = extraction_ms(html, pages.url)
    token_us = (fifty[0] - one[0]) / 49 * 1000
    print(f"CPU per turn, {args.turns} turns of each kind one at a time, {args.pings} pings, "
          f"{args.database}; {header}")  # fmt: skip
    print()
    print(table(["kind", "worker CPU ms per turn", "web CPU ms per turn"], rows))
    print()
    if args.only == "fetch":
        print(f"the page's extraction alone: {extracted:.1f} ms")
        print_threads()
        return
    print(f"worker CPU per streamed token: {token_us:.0f} µs; 50-token text turn ÷ ping: "
          f"{fifty[0] / ping_ms:.2f}; the page's extraction alone: {extracted:.1f} ms "
          f"(fetch turn − 50-token text turn: {fetch[0] - fifty[0]:.1f} ms)")  # fmt: skip
    print_threads()


def print_threads() -> None:
    """Print the worker's CPU ms per turn by thread of each kind measured (``--threads``)."""
    for label, spent in THREADS:
        print(f"worker CPU ms per turn by thread, {label}: {spent}")


if __name__ == "__main__":
    main()
