"""CPU and wall time of one model call in one process: the request, its connection and the
reply's read, through ``OpenAICompatibleProvider.stream`` alone.

Run from the project root: ``.venv/bin/python -m bench.call_cpu [--calls 200] [--rounds 5]``.

A fake model in a process of its own answers each call with one token at once. One client
makes ``--calls`` calls in a row, as a worker's cached client makes a turn's model steps; the
figure is the process's CPU (and the wall time) per call, a round at a time. A call that
opens a connection (TCP connect, httpcore's connection, h11's state) costs that in both.
"""

from __future__ import annotations

import argparse
import statistics
import time

from bench.harness import FakeModelProcess


def per_call(base_url: str, calls: int) -> tuple[float, float]:
    """Return the process CPU seconds and wall seconds per call over ``calls`` calls."""
    from workers.providers import OpenAICompatibleProvider

    messages = [{"role": "user", "content": "hi"}]
    with OpenAICompatibleProvider("bench", base_url, None) as provider:
        list(provider.stream("m", messages))  # warm: imports, the first connection
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(calls):
            list(provider.stream("m", messages))
        return (time.process_time() - cpu) / calls, (time.perf_counter() - wall) / calls


def main(argv: list[str] | None = None) -> None:
    """Measure and print the CPU and wall time per model call."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    cpu: list[float] = []
    wall: list[float] = []
    with FakeModelProcess("stream", "--tokens", "1", "--seconds", "0") as model:
        for _ in range(args.rounds):
            one_cpu, one_wall = per_call(model.base_url, args.calls)
            cpu.append(one_cpu * 1e6)
            wall.append(one_wall * 1e6)
    for name, values in (("CPU", cpu), ("wall", wall)):
        values.sort()
        print(
            f"{name} per model call, µs: median {statistics.median(values):.0f}, "
            f"min {values[0]:.0f}, max {values[-1]:.0f} ({args.rounds} rounds of {args.calls})"
        )


if __name__ == "__main__":
    main()
