"""A ``web_fetch`` call's task in one process, the model step after it left out: what the call
costs beyond the page's extraction.

Run from the project root: ``.venv/bin/python -m bench.fetch_call [--calls 40] [--rounds 4]
[--page PAGE.html.gz] [--guarded] [--profile 40] [--trips]``.

A private Redis, a migrated SQLite database, the page served on 127.0.0.1 and a fake model in a
process of its own that asks for ``web_fetch`` of it. Each turn is stored as the web stores it
and its step 0 run as the worker runs it (``run_turn_step.apply``: the call stored, its task
published to a queue nobody reads); what is measured is the call's task alone
(``run_tool_call.apply``, the next step left out): this process's CPU and the parser
processes' (their CPU clocks), beside ``extract`` of the same page in this process. Per call:
database statements and commits, Redis commands (``INFO commandstats``, the watcher's reads
included) and round trips (each send on a connection: a lone command, a script's run, a whole
pipeline; with ``--trips`` one call's, each with the line of Lookout's code that sent it),
threads started, Celery publishes, and (over one more round) the objects left that
only the cycle collector frees. ``--guarded`` fetches through the guarded session (127.0.0.1
taken for a public address in this process), as a worker does when private networks are not
allowed; without it, a plain session, as ``bench.turn_cpu``'s stack. With ``--profile``,
cProfile of this thread's CPU over one more round (the tool's own thread is not in it:
``--profile-tool`` profiles that thread instead).
"""

from __future__ import annotations

import argparse
import cProfile
import ctypes
import gc
import gzip
import io
import json
import pstats
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from flask import Flask

from bench.call_step import Publishes, called_turns, stored_owner, task_app
from bench.harness import FakeModelProcess, machine, table
from bench.load import PageServer
from bench.step_cpu import PAGE, Counts, redis_calls
from bench.turn_cpu import extraction_ms
from core.extensions import db
from core.models import ToolCall

PLUGINS = "bench.bench_plugins,tools.web_fetch"
LIBC = ctypes.CDLL(None, use_errno=True)


def process_cpu(pid: int) -> float:
    """Return the CPU seconds of process ``pid`` so far (its CPU clock, every thread's)."""
    clock = ctypes.c_int()
    if LIBC.clock_getcpuclockid(pid, ctypes.byref(clock)) != 0:
        return 0.0
    try:
        return time.clock_gettime(clock.value)
    except OSError:
        return 0.0


def live_threads_cpu() -> dict[str, float]:
    """Return the CPU seconds of each live thread of this process so far, by name."""
    names = {thread.native_id: thread.name for thread in threading.enumerate()}
    seconds: dict[str, float] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            ran = int((task / "schedstat").read_text().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            continue
        name = names.get(int(task.name), "other")
        seconds[name] = seconds.get(name, 0.0) + ran
    return seconds


def parsers_cpu() -> float:
    """Return the CPU seconds the live parser processes of this process have used."""
    from tools.parsers import _open_pools

    return sum(process_cpu(pid) for pool in list(_open_pools) for pid in pool.pids())


def run_calls(turns: list[tuple[str, str]]) -> None:
    """Run each turn's call in its task, the next step left out."""
    from workers import toolcalls

    here = toolcalls.run_next_step
    toolcalls.run_next_step = lambda turn_id, step, call_id: None
    try:
        for turn_id, call_id in turns:
            toolcalls.run_tool_call.apply(args=(turn_id, call_id))
    finally:
        toolcalls.run_next_step = here


class RoundTrips:
    """Sends on this process's Redis connections: each is one round trip (a command, a
    script's run, or a pipeline's commands together), named by its first command and the line
    of Lookout's code that made it."""

    def __init__(self) -> None:
        import redis.connection

        self.sent = 0
        self.trace: list[str] | None = None
        send = redis.connection.AbstractConnection.send_packed_command

        def counted(connection, command, check_health=True):  # noqa: ANN001, ANN202
            self.sent += 1
            if self.trace is not None:
                self.trace.append(f"{first_command(command)} {caller()}")
            return send(connection, command, check_health)

        redis.connection.AbstractConnection.send_packed_command = counted

    def traced(self, turns: list[tuple[str, str]]) -> list[str]:
        """Return the round trips of ``run_calls(turns)``, one line each."""
        self.trace = []
        try:
            run_calls(turns)
            return self.trace
        finally:
            self.trace = None


def first_command(packed: bytes | str | list) -> str:
    """Return the first command's name in a packed send (RESP: ``*N $len NAME ...``)."""
    data = packed if isinstance(packed, bytes | str) else b"".join(packed)
    if isinstance(data, str):
        data = data.encode()
    parts = data.split(b"\r\n", 3)
    return parts[2].decode(errors="replace").upper() if len(parts) > 2 else "?"


def caller() -> str:
    """Return the two innermost frames of Lookout's own code (not redis-py's, this bench's or
    a Lua script's runner), and the thread."""
    root = str(Path(__file__).resolve().parents[1])
    frame, found = sys._getframe(2), []
    while frame is not None and len(found) < 2:
        name, function = frame.f_code.co_filename, frame.f_code.co_name
        ours = name.startswith(root) and "/.venv/" not in name
        if ours and not name.endswith("fetch_call.py") and function != "__call__":
            found.append(f"{Path(name).relative_to(root)}:{frame.f_lineno} {function}")
        frame = frame.f_back
    return f"{' < '.join(found) or '?'} ({threading.current_thread().name})"


class Threads:
    """Threads started in this process."""

    def __init__(self) -> None:
        self.started = 0
        start = threading.Thread.start

        def counted(thread: threading.Thread) -> None:
            self.started += 1
            start(thread)

        threading.Thread.start = counted  # type: ignore[method-assign]


def cyclic_garbage(turns: list[tuple[str, str]]) -> int:
    """Return how many objects ``run_calls(turns)`` left that only the cycle collector frees
    (the bench's own ``apply`` results among them, on either side alike)."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run_calls(turns)
        gc.collect()
        return len(gc.garbage)
    finally:
        gc.garbage.clear()
        gc.set_debug(0)
        gc.enable()


def allow_loopback() -> None:
    """Take 127.0.0.1 for a public address in this process, so that the calls go through the
    guarded session a worker makes when private networks are not allowed."""
    from tools import addresses

    judge = addresses.find_refusal_reason

    def find_refusal_reason(ip: str) -> str | None:
        return None if ip == "127.0.0.1" else judge(ip)

    addresses.find_refusal_reason = find_refusal_reason


def profiled(turns: list[tuple[str, str]], top: int, tool_thread: bool) -> str:
    """Return cProfile's top entries by cumulative time over ``run_calls(turns)``: this
    thread's CPU, or with ``tool_thread`` the tool's own threads'."""
    if not tool_thread:
        profiler = cProfile.Profile(time.thread_time)
        profiler.runcall(run_calls, turns)
    else:
        from workers import toolcalls

        profiler = cProfile.Profile(time.thread_time)
        original = toolcalls.execute_with_deadline

        def target_profiled(tool, input, ctx, abandoned_max=8):  # noqa: ANN001, ANN202
            execute = tool.execute

            def execute_profiled(input, ctx):  # noqa: ANN001, ANN202
                return profiler.runcall(execute, input, ctx)

            object.__setattr__(tool, "execute", execute_profiled)
            try:
                return original(tool, input, ctx, abandoned_max)
            finally:
                object.__setattr__(tool, "execute", execute)

        toolcalls.execute_with_deadline = target_profiled
        try:
            run_calls(turns)
        finally:
            toolcalls.execute_with_deadline = original
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def spread(values: list[float]) -> str:
    """Return the median of ``values`` and each of them."""
    each = " ".join(f"{value:.2f}" for value in values)
    return f"{statistics.median(values):.2f} ({each})"


def stop_watcher(app: Flask) -> None:
    """Stop the cancel watcher's threads before Redis stops: left reading a stopped Redis, the
    cancel thread logged a ConnectionError traceback at exit."""
    watcher = app.extensions.get("lookout_cancel_watcher")
    if watcher is not None:
        watcher.close()


def main(argv: list[str] | None = None) -> None:
    """Measure and print a fetch call's CPU and counts beside the page's extraction."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--page", type=Path, default=PAGE)
    parser.add_argument("--profile", type=int, default=0, help="cProfile's top N entries")
    parser.add_argument("--profile-tool", action="store_true", help="profile the tool's thread")
    parser.add_argument("--trips", action="store_true", help="list one call's round trips")
    parser.add_argument(
        "--guarded", action="store_true",
        help="fetch through the guarded session (127.0.0.1 taken for public), as a worker does "
        "when private networks are not allowed",
    )  # fmt: skip
    args = parser.parse_args(argv)
    header = machine()
    folder = Path(tempfile.mkdtemp(prefix="lookout-bench-fetchcall-"))
    from tests.support.redis_server import RedisServer

    with RedisServer() as redis_server, PageServer(folder, args.page) as pages:
        fake_args = ("tool", "--tool", "web_fetch", "--arguments", json.dumps({"url": pages.url}))
        with FakeModelProcess(*fake_args) as fake:
            if args.guarded:
                allow_loopback()
            private = not args.guarded
            app = task_app(folder, redis_server.url, PLUGINS, ALLOW_PRIVATE_NETWORKS=private)
            with app.app_context():
                owner = stored_owner(fake.base_url)
                # warm: imports, plugins, the parser processes
                run_calls(called_turns(owner, 3, "web_fetch"))
                counts, publishes, threads = Counts(db.engine), Publishes(), Threads()
                trips = RoundTrips()
                names = ("statements", "commits", "commands", "round trips", "publishes", "threads")
                figures: dict[str, float] = dict.fromkeys(names, 0.0)
                by_name: dict[str, int] = {}
                by_thread: dict[str, float] = {}
                cpu, parsers = [], []
                for _ in range(args.rounds):
                    turns = called_turns(owner, args.calls, "web_fetch")
                    before = (counts.statements, counts.commits, len(publishes.names))
                    threads_before, commands = threads.started, redis_calls()
                    sent = trips.sent
                    started, parsers_before = time.process_time(), parsers_cpu()
                    live = live_threads_cpu()
                    run_calls(turns)
                    live_after = live_threads_cpu()
                    ended = time.process_time() - started
                    for name, value in live_after.items():
                        spent = value - live.get(name, 0.0)
                        by_thread[name] = by_thread.get(name, 0.0) + spent
                        ended -= spent
                    by_thread["threads that ended (the tools')"] = (
                        by_thread.get("threads that ended (the tools')", 0.0) + ended
                    )
                    cpu.append((time.process_time() - started) * 1000 / args.calls)
                    parsers.append((parsers_cpu() - parsers_before) * 1000 / args.calls)
                    figures["round trips"] += trips.sent - sent
                    after = redis_calls()
                    figures["statements"] += counts.statements - before[0]
                    figures["commits"] += counts.commits - before[1]
                    figures["publishes"] += len(publishes.names) - before[2]
                    figures["threads"] += threads.started - threads_before
                    for name, value in after.items():
                        added = value - commands.get(name, 0)
                        if name != "info" and added > 0:
                            figures["commands"] += added
                            by_name[name] = by_name.get(name, 0) + added
                garbage = cyclic_garbage(called_turns(owner, args.calls, "web_fetch"))
                ok = db.session.scalar(
                    db.select(db.func.count()).select_from(ToolCall).filter_by(outcome="ok")
                )
                trace = trips.traced(called_turns(owner, 1, "web_fetch")) if args.trips else []
                profile = ""
                if args.profile:
                    turns = called_turns(owner, args.calls, "web_fetch")
                    profile = profiled(turns, args.profile, args.profile_tool)
                stop_watcher(app)
        html = gzip.decompress(args.page.read_bytes()).decode("utf-8", "replace")
        extracted = extraction_ms(html, pages.url)
    n = args.calls * args.rounds
    rows = [[name, f"{value / n:.2f}"] for name, value in figures.items()]
    rows.append(["objects only the cycle collector frees", f"{garbage / args.calls:.2f}"])
    rows.append(["worker CPU ms, median (each round)", spread(cpu)])
    rows.append(["parser processes' CPU ms, median (each round)", spread(parsers)])
    rows.append(["the page's extraction alone, in process (median ms)", f"{extracted:.2f}"])
    session = "the guarded session" if args.guarded else "a plain session"
    print(f"A web_fetch call's task in one process, {args.rounds} rounds of {args.calls}, "
          f"{session}; {header}")  # fmt: skip
    print()
    print(table(["per call", "figure"], rows))
    print()
    print("Redis commands: " + ", ".join(f"{k} {v / n:.2f}" for k, v in sorted(by_name.items())))
    busy = sorted(by_thread.items(), key=lambda item: -item[1])
    print("worker CPU ms by thread: " + ", ".join(
        f"{name} {value * 1000 / n:.2f}" for name, value in busy if value * 1000 / n >= 0.01
    ))  # fmt: skip
    print(f"calls ok: {ok} (of {n + 3 + args.calls}, read before any --trips or --profile)")
    if trace:
        print(f"\none call's {len(trace)} round trips:")
        print("\n".join(f"  {line}" for line in trace))
    if profile:
        print(f"\n{profile}")


if __name__ == "__main__":
    main()
