"""Open event streams on one web process: delivery lag, web CPU per event sent, memory per stream.

Run from the project root: ``.venv/bin/python -m bench.streams [--streams 2000] [--turns 200]``;
``--checkout DIR --worker-class gthread --threads 64`` runs another checkout's web the same way
(old main, as ./run served it). One gunicorn worker process serves the API on a private Redis and
SQLite; the clients are another process of this script (asyncio, raw sockets on loopback), each
turn followed by streams/turns of them. Events are written into the turns' Redis streams
directly, as workers write them, at ``--rate`` events a second per turn, each carrying the time
it was written: the lag is when a client read it minus that. The web's CPU is its worker
process's user+system time over the writing, divided by the events the clients received.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import psutil
import redis
import requests

from bench.harness import ROOT, machine, percentile, table
from core.extensions import db
from core.models import ApiToken, User
from core.turn.state import key
from tests.support import databases
from tests.support.processes import free_port, start_process, stop_process, wait_for_port
from tests.support.redis_server import RedisServer
from tests.support.turns import stored_turn
from tests.support.workers import worker_environ
from webapp import create_app

STAMP = re.compile(rb'"t": ([0-9.]+)')


async def follow(port: int, turn: str, token: str, lags: list[float], opened: list[int]) -> None:
    """Read one stream until its turn completes, noting each event's lag in ms."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=2**20)
    writer.write(
        f"GET /api/turns/{turn}/events HTTP/1.1\r\nHost: bench\r\n"
        f"Authorization: Bearer {token}\r\n\r\n".encode()
    )
    pending, counted = b"", False
    while True:
        data = await reader.read(65536)
        if not data:
            break
        now = time.time()
        pending += data
        if not counted and b"keep-alive" in pending:
            opened[0] += 1
            counted = True
        cut = pending.rfind(b"\n\n")
        if cut < 0:
            continue
        done, pending = pending[: cut + 2], pending[cut + 2 :]
        lags.extend((now - float(m)) * 1000 for m in STAMP.findall(done))
        if b"turn.completed" in done:
            break
    writer.close()


async def clients(port: int, turns: list[str], token: str, per_turn: int) -> dict:
    """Open every stream, say when they are open, read them all; return the lags."""
    lags: list[float] = []
    opened = [0]
    tasks = []
    for number in range(len(turns) * per_turn):
        tasks.append(
            asyncio.create_task(follow(port, turns[number % len(turns)], token, lags, opened))
        )
        if number % 50 == 49:
            await asyncio.sleep(0.05)  # a burst of 2,000 connects overflows the listen backlog
    last, still = -1, 0
    while opened[0] < len(tasks) and still < 100:  # stop waiting once no stream opened for 20 s
        await asyncio.sleep(0.2)
        still = still + 1 if opened[0] == last else 0
        last = opened[0]
    print(json.dumps({"opened": opened[0]}), flush=True)
    await asyncio.gather(*tasks, return_exceptions=True)
    return {"lags": lags}


def client_main(port: int, turns_file: str, token: str, per_turn: int) -> None:
    """The client process: as many sockets as the system allows, then the streams."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    turns = json.loads(Path(turns_file).read_text())
    result = asyncio.run(clients(port, turns, token, per_turn))
    print(json.dumps(result), flush=True)


def write_events(client: redis.Redis, turns: list[str], per_turn: int, rate: float) -> int:
    """Write ``per_turn`` text events to every turn at ``rate`` a second each, then their ends."""
    for number in range(per_turn):
        started = time.monotonic()
        pipe = client.pipeline(transaction=False)
        for turn in turns:
            data = json.dumps({"text": f"word {number} ", "t": time.time()})
            pipe.xadd(key(turn, "events"), {"event": "text.delta", "data": data})
        pipe.execute()
        time.sleep(max(0.0, 1 / rate - (time.monotonic() - started)))
    pipe = client.pipeline(transaction=False)
    for turn in turns:
        pipe.xadd(key(turn, "events"), {"event": "turn.completed", "data": "{}"})
    pipe.execute()
    return per_turn * len(turns)


def run(args: argparse.Namespace) -> dict:
    """Serve, open the streams, write the events; return the measures."""
    directory = Path(f"/tmp/lookout-bench-streams-{free_port()}")
    directory.mkdir()
    with RedisServer() as redis_server:
        app = create_app(
            {
                "SECRET_KEY": "bench",
                "DATABASE_URL": f"sqlite:///{directory / 'lookout.db'}",
                "REDIS_URL": redis_server.url,
                "QUOTA_EVENT_STREAMS": 10000,
            }
        )
        databases.migrate(app)
        with app.app_context():
            user = User.make("bench", "password")
            db.session.add(user)
            row, token = ApiToken.make(user, "bench")
            db.session.add(row)
            db.session.commit()
            user_id = user.id
        turns = [stored_turn(app, user_id, "running") for _ in range(args.turns)]
        (directory / "turns.json").write_text(json.dumps(turns))
        port = free_port()
        env = worker_environ(app)
        web = start_process(
            [
                sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}",
                "--worker-class", args.worker_class, "--workers", "1", "--threads",
                str(args.threads), "--worker-connections", str(args.streams + 100),
                "--backlog", "4096", "--no-control-socket", "webapp:create_app()",
            ],
            directory / "web.log",
            env=env,
            cwd=Path(args.checkout),
        )  # fmt: skip
        try:
            wait_for_port("127.0.0.1", port, 60)
            requests.get(f"http://127.0.0.1:{port}/healthz", timeout=180)
            worker = psutil.Process(web.pid).children()[0]
            rss_before = worker.memory_info().rss
            per_turn = args.streams // args.turns
            client = subprocess.Popen(
                [sys.executable, "-m", "bench.streams", "--client", str(port),
                 str(directory / "turns.json"), token, str(per_turn)],
                stdout=subprocess.PIPE, cwd=ROOT, text=True,
            )  # fmt: skip
            opened = json.loads(client.stdout.readline())["opened"]
            rss_open = worker.memory_info().rss
            threads = worker.num_threads()
            cpu = worker.cpu_times()
            written = write_events(
                redis.Redis.from_url(redis_server.url), turns, args.events, args.rate
            )
            result = json.loads(client.stdout.readline())
            cpu_after = worker.cpu_times()
            client.wait(60)
        finally:
            stop_process(web, timeout=10)
    lags = result["lags"]
    cpu_seconds = (cpu_after.user + cpu_after.system) - (cpu.user + cpu.system)
    return {
        "opened": opened,
        "threads": threads,
        "written": written,
        "received": len(lags),
        "p50": percentile(lags, 0.5),
        "p95": percentile(lags, 0.95),
        "cpu_us_per_event": cpu_seconds / max(1, len(lags)) * 1e6,
        "kib_per_stream": (rss_open - rss_before) / max(1, opened) / 1024,
    }


def main() -> None:
    if sys.argv[1:2] == ["--client"]:
        port, turns_file, token, per_turn = sys.argv[2:6]
        client_main(int(port), turns_file, token, int(per_turn))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--events", type=int, default=50, help="text events per turn")
    parser.add_argument("--rate", type=float, default=5.0, help="events a second per turn")
    parser.add_argument("--checkout", default=str(ROOT), help="the checkout whose web runs")
    parser.add_argument("--worker-class", default="webapp.stream_worker.StreamingWorker")
    parser.add_argument("--threads", type=int, default=16)
    args = parser.parse_args()
    print(machine())
    measures = run(args)
    header = ["web", "streams open", "web threads", "events sent", "lag p50 ms", "lag p95 ms",
              "web CPU µs/event", "KiB/stream"]  # fmt: skip
    row = [f"{args.worker_class} ×{args.threads} threads", measures["opened"], measures["threads"],
           measures["received"], measures["p50"], measures["p95"],
           measures["cpu_us_per_event"], measures["kib_per_stream"]]  # fmt: skip
    print(table(header, [row]))


if __name__ == "__main__":
    main()
