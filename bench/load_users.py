"""The simulated users of ``bench.load``: each a thread, in this process or spread over several.

One client process holds every user's thread in ``bench.load`` by default. On a machine with
more cores its GIL binds the run (the eighth round measured 1,560–1,910 turns a minute for one
process), so ``run_users`` spreads the users evenly over ``processes`` client processes, each
started as ``python -m bench.load_users`` (the command line ``bench.load_parts`` knows as the
clients), given its users as JSON on stdin, running the same user loop and giving back each
user's records and the CPU its loop used as JSON on stdout. The schedule (each user's start,
the stop) is read on ``time.monotonic``, one clock for every process of the machine.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.chat import ChatClient, parse_sse  # noqa: E402


def one_turn(chat: ChatClient, model: str, answer_seconds: float, out: list[dict]) -> None:
    """Start a turn in a new conversation, read its stream to the end, record what happened."""
    try:
        conversation = chat.new_conversation()
        posted = time.perf_counter()
        started = chat.start(conversation, "Read the page and sum it up.", model)
        answered = time.perf_counter()
        response = chat.call(
            "GET", f"/api/turns/{started['turn']['id']}/events", stream=True, timeout=120
        )
        if response.status_code != 200:
            out.append({"error": f"events answered {response.status_code}"})
            return
        events = list(parse_sse(response.iter_lines(decode_unicode=True)))
        ended = time.perf_counter()
    except (AssertionError, requests.RequestException) as exc:
        out.append({"error": describe(exc)})
        return
    end = events[-1].name if events else "no events"
    if end != "turn.completed":
        why = str(events[-1].data.get("error") or "")[:100] if events else ""
        out.append({"error": f"ended with {end}: {why}".rstrip(": ")})
        return
    out.append(
        {
            "added_ms": (ended - posted - answer_seconds) * 1000,
            "post_ms": (answered - posted) * 1000,
        }
    )


def describe(exc: Exception) -> str:
    """Return a short kind of error: the status a request got, or the exception's type."""
    text = str(exc)
    if isinstance(exc, AssertionError):
        return text.split("\n")[0][:120]
    return type(exc).__name__


def user_loop(
    chat: ChatClient,
    model: str,
    start_at: float,
    stop_at: float,
    think: float,
    answer_seconds: float,
    out: list[dict],
) -> None:
    """Be one user: wait for the ramp, then chat until ``stop_at``, pausing between turns."""
    time.sleep(max(0.0, start_at - time.monotonic()))
    jitter = random.Random(id(chat))
    while time.monotonic() < stop_at:
        one_turn(chat, model, answer_seconds, out)
        time.sleep(think * jitter.uniform(0.5, 1.5))


def run_threads(job: dict) -> list[list[dict]]:
    """Run ``job``'s users as threads of this process; return each user's records, in the
    job's order."""
    results: list[list[dict]] = [[] for _ in job["users"]]
    threads = [
        threading.Thread(
            target=user_loop,
            args=(
                ChatClient(base_url, token),
                job["model"],
                start_at,
                job["stop_at"],
                job["think"],
                job["answer_seconds"],
                out,
            ),  # fmt: skip
            daemon=True,
        )
        for (base_url, token, start_at), out in zip(job["users"], results, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, job["stop_at"] - time.monotonic()) + 300)
    return results


def run_users(job: dict, processes: int) -> tuple[list[list[dict]], float]:
    """Run ``job``'s users (``[base_url, token, start_at]`` each) spread evenly over
    ``processes`` client processes (in this one when 1); return each user's records, in the
    job's order, and the CPU seconds the processes it started used while their users ran
    (0 in this one: the caller reads its own)."""
    if processes <= 1:
        return run_threads(job), 0.0
    users = job["users"]
    shares = [list(range(k, len(users), processes)) for k in range(processes)]
    clients = []
    for share in shares:
        client = subprocess.Popen(
            [sys.executable, "-m", "bench.load_users"], cwd=ROOT, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )  # fmt: skip
        client.stdin.write(json.dumps({**job, "users": [users[i] for i in share]}))
        client.stdin.close()
        clients.append(client)
    results: list[list[dict]] = [[] for _ in users]
    cpu = 0.0
    for share, client in zip(shares, clients, strict=True):
        with client.stdout:
            answer = json.loads(client.stdout.read())
        client.wait()
        for index, out in zip(share, answer["results"], strict=True):
            results[index] = out
        cpu += answer["cpu"]
    return results, cpu


def main() -> None:
    """Be one client process: read a job on stdin, run it, write its records on stdout."""
    job = json.load(sys.stdin)
    before = sum(psutil.Process().cpu_times()[:2])
    results = run_threads(job)
    cpu = sum(psutil.Process().cpu_times()[:2]) - before
    json.dump({"results": results, "cpu": cpu}, sys.stdout)


if __name__ == "__main__":
    main()
