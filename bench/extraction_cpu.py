"""Compares two checkouts' extraction CPU page by page, each in its own process, taking turns.

Run from the project root: ``.venv/bin/python bench/extraction_cpu.py --old DIR [--rounds N]
[--only SET] [--checks]``. This checkout and DIR (a detached worktree of main, say) each load
every page of the shared set, ``bench/data`` and the labelled pages (this checkout's copies;
with ``--checks``, ``bench/checks`` too), and extract them in turn, old and new swapping who
goes first on every page: a busy spell of a shared machine slows both alike. A page's time is
the CPU time of its ``extract`` call (``time.process_time_ns``, garbage of the call before
collected outside it), the fastest of ``--rounds``. Prints, per set, the median and total
milliseconds of each side and new ÷ old, and the pages whose title or text differ between the
two sides (a change meant to cost less must read every page as before).
"""

from __future__ import annotations

import argparse
import gc
import gzip
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
# The shared set beside the project (``../shared``), or beside a folder of worktrees above it.
SHARED_DATA = next(
    (
        folder / "shared" / "bench" / "extraction"
        for folder in BENCH.parents[1:]
        if (folder / "shared" / "bench" / "extraction").is_dir()
    ),
    BENCH.parents[1] / "shared" / "bench" / "extraction",
)


def _folders(checks: bool) -> list[Path]:
    own = [path.parent for path in sorted((BENCH / "data").glob("*/ground-truth.json"))]
    more = sorted((BENCH / "checks").glob("*/ground-truth.json")) if checks else []
    return [SHARED_DATA, *own, BENCH / "pages", *(path.parent for path in more)]


def _pages(checks: bool) -> list[tuple[str, str, str]]:
    pages = []
    for folder in _folders(checks):
        labels = folder / "labels.json"
        truth = labels if labels.exists() else folder / "ground-truth.json"
        entries = json.loads(truth.read_text(encoding="utf-8"))
        for key in sorted(entries):
            with gzip.open(folder / "html" / f"{key}.html.gz", "rt", encoding="utf-8") as file:
                pages.append((f"{folder.name}/{key}", file.read(), entries[key]["url"]))
    return pages


def serve(code: Path, checks: bool) -> None:
    """Extract, with ``code``'s extractor, the page of each index read from stdin; print ms and
    a digest of the title and text."""
    sys.path.insert(0, str(code))
    from tools.web_fetch.extract import extract

    pages = _pages(checks)
    print(json.dumps([key for key, _html, _url in pages]), flush=True)
    for line in sys.stdin:
        _key, html, url = pages[int(line)]
        gc.collect()
        start = time.process_time_ns()
        extracted = extract(html, url)
        elapsed = (time.process_time_ns() - start) / 1e6
        read = f"{extracted.title}\0{extracted.text}".encode("utf-8", "surrogatepass")
        print(elapsed, hashlib.sha256(read).hexdigest(), flush=True)


def main() -> None:
    """Print each set's old and new CPU per page, side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="the other checkout")
    parser.add_argument("--rounds", type=int, default=2, help="a page's time: the fastest of N")
    parser.add_argument("--only", default="", help="pages whose set/name starts with this")
    parser.add_argument("--checks", action="store_true", help="bench/checks' pages too")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.checks)
        return
    sides = {"old": args.old.resolve(), "new": BENCH.parent}
    more = ["--checks"] if args.checks else []
    workers = {
        side: subprocess.Popen(
            [sys.executable, __file__, "--old", str(code), "--serve", str(code), *more],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for side, code in sides.items()
    }
    keys = [json.loads(worker.stdout.readline()) for worker in workers.values()][0]
    chosen = [index for index, key in enumerate(keys) if key.startswith(args.only)]
    best = {side: dict.fromkeys(chosen, float("inf")) for side in workers}
    read: dict[str, dict[int, str]] = {side: {} for side in workers}
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    for round_ in range(args.rounds):
        for turn, index in enumerate(chosen):
            order = ("old", "new") if (turn + round_) % 2 == 0 else ("new", "old")
            for side in order:
                workers[side].stdin.write(f"{index}\n")
                workers[side].stdin.flush()
                elapsed, digest = workers[side].stdout.readline().split()
                best[side][index] = min(best[side][index], float(elapsed))
                read[side][index] = digest
    for worker in workers.values():
        worker.stdin.close()
        worker.wait()
    print(
        "| set | pages | old median ms | new median ms | old total ms | new total ms | new ÷ old |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    sets = sorted({keys[index].split("/")[0] for index in chosen})
    for name in [*sets, None]:
        some = [i for i in chosen if name is None or keys[i].startswith(f"{name}/")]
        old = [best["old"][i] for i in some]
        new = [best["new"][i] for i in some]
        print(
            f"| {name or 'all'} | {len(some)} | {statistics.median(old):.2f} | "
            f"{statistics.median(new):.2f} | {sum(old):,.0f} | {sum(new):,.0f} | "
            f"{sum(new) / sum(old):.3f} |"
        )
    differ = [keys[index] for index in chosen if read["old"][index] != read["new"][index]]
    print(f"pages read differently: {len(differ)} of {len(chosen)}")
    for key in differ:
        print(f"  {key}")


if __name__ == "__main__":
    main()
