"""What the hop to a parser process adds per page, next to extraction in the calling process.

Run from the project root: ``.venv/bin/python bench/parser_hop.py [--repeats N]``. Every page of
the shared 181-page extraction set is extracted both ways, in turns page by page (the order
alternating), each ``--repeats`` times; a page's time in each mode is its fastest run, so a
busy spell of the machine is not counted as hop. Time is wall-clock (the pool's work happens in
another process); the hop is the per-page difference: pickling the page's bytes, the result
as JSON (and its checks), two pipe writes, and the parser process waking up. The last row sends
each page to the parser and back with no work done (``len``): the transport alone. The pool has
one process.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.extraction import SHARED_DATA, load  # noqa: E402
from bench.harness import machine, percentile, table  # noqa: E402
from tools.api import Signal  # noqa: E402
from tools.parsers import ParserLimits, ParserPool  # noqa: E402
from tools.web_fetch.tool import extract_html  # noqa: E402


def main() -> None:
    """Print the Markdown table of in-process and pooled extraction times per page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per page and mode")
    parser.add_argument("--limit", type=int, default=None, help="only the first N pages")
    args = parser.parse_args()
    pages = [(url, html.encode("utf-8")) for _, url, html, _ in load(SHARED_DATA, args.limit)]
    pool = ParserPool(ParserLimits(processes=1), preload=["tools.web_fetch"])
    pool.run(len, b"warm", signal=Signal(), what="warm-up")
    inline: list[float] = []
    pooled: list[float] = []
    transport: list[float] = []
    print(f"# {machine()}", file=sys.stderr)
    try:
        for number, (url, data) in enumerate(pages):
            runs: dict[str, list[float]] = {"inline": [], "pooled": []}
            for repeat in range(args.repeats):
                order = ["inline", "pooled"] if (number + repeat) % 2 == 0 else ["pooled", "inline"]
                for mode in order:
                    started = time.perf_counter()
                    if mode == "inline":
                        extract_html(data, "text/html", "utf-8", url)
                    else:
                        pool.run(
                            extract_html, data, "text/html", "utf-8", url, signal=Signal(), what=url
                        )
                    runs[mode].append(time.perf_counter() - started)
            inline.append(min(runs["inline"]))
            pooled.append(min(runs["pooled"]))
            sent = []
            for _ in range(args.repeats):
                started = time.perf_counter()
                pool.run(len, data, signal=Signal(), what=url)
                sent.append(time.perf_counter() - started)
            transport.append(min(sent))
    finally:
        pool.close()
    hops = [p - i for p, i in zip(pooled, inline, strict=True)]
    ms = 1000
    rows = [
        ["in the calling process", statistics.median(inline) * ms, percentile(inline, 0.95) * ms],
        ["in a parser process", statistics.median(pooled) * ms, percentile(pooled, 0.95) * ms],
        ["hop (per-page difference)", statistics.median(hops) * ms, percentile(hops, 0.95) * ms],
        [
            "the page's bytes there and back, no work",
            statistics.median(transport) * ms,
            percentile(transport, 0.95) * ms,
        ],
    ]
    print(f"{len(pages)} pages, fastest of {args.repeats} runs per page and mode\n")
    print(table(["extraction", "median ms", "p95 ms"], rows))


if __name__ == "__main__":
    main()
