"""What a trivial job's hop to a parser process costs in two checkouts, side by side in one run.

Run from the project root: ``.venv/bin/python bench/parser_hop_sides.py --before /work/main``.
Each round measures both checkouts (``--before`` and this one, the order alternating), each in
a fresh process whose ``tools.parsers`` comes from that checkout: a pool of one parser process,
warmed, then ``--jobs`` trivial jobs (``len`` of a small and of a page-sized payload) one after
the other. A round's figure is the median wall-clock time per job; the table gives the median of
the rounds and the ratio of this checkout to the other. The sandbox's start-up is not in it
(the pool is warm); what is in it is the reply format and its checks, and the pipe.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
PAYLOADS = {"1 KB payload": 1_000, "100 KB payload (a page)": 100_000}


def measure(tree: str, jobs: int) -> dict[str, float]:
    """Return the median milliseconds per job for each payload, with ``tree``'s parser pool."""
    sys.path.insert(0, tree)
    from tools.api import Signal
    from tools.parsers import ParserLimits, ParserPool

    pool = ParserPool(ParserLimits(processes=1))
    try:
        pool.run(len, b"warm", signal=Signal(), what="warm-up")
        medians = {}
        for name, size in PAYLOADS.items():
            payload = b"x" * size
            times = []
            for _ in range(jobs):
                started = time.perf_counter()
                pool.run(len, payload, signal=Signal(), what="bench")
                times.append(time.perf_counter() - started)
            medians[name] = statistics.median(times) * 1000
        return medians
    finally:
        pool.close()


def main() -> None:
    """Print the Markdown table of both checkouts' hop per trivial job, and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="the other checkout (e.g. /work/main)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds, each measuring both")
    parser.add_argument("--jobs", type=int, default=2000, help="trivial jobs per measure")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # a tree: measure it, print JSON
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.jobs)))
        return
    if not args.before:
        parser.error("--before names the checkout to compare with, such as /work/main")
    trees = {"before": str(Path(args.before).resolve()), "after": str(HERE)}
    results: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for number in range(args.rounds):
        for side in ("before", "after") if number % 2 == 0 else ("after", "before"):
            command = [sys.executable, __file__, "--measure", trees[side], "--jobs", str(args.jobs)]
            done = subprocess.run(
                command, check=True, capture_output=True, text=True, cwd=trees[side]
            )
            results[side].append(json.loads(done.stdout.splitlines()[-1]))
    print(f"{args.rounds} rounds of {args.jobs} jobs per payload; before: {trees['before']}\n")
    print("| trivial job | before, median ms | after, median ms | after / before |")
    print("|---|---|---|---|")
    for name in PAYLOADS:
        before = statistics.median(r[name] for r in results["before"])
        after = statistics.median(r[name] for r in results["after"])
        print(f"| {name} | {before:.3f} | {after:.3f} | {after / before:.2f} |")


if __name__ == "__main__":
    main()
