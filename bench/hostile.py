"""Hostile pages and files through web_fetch, with the production limits: time and memory each.

Run from the project root: ``.venv/bin/python bench/hostile.py``. Each case of the hostile-content
suite (``tests/tools/web_fetch/test_hostile.py``) is served from a loopback site treated as
public and read by the real web_fetch tool with the default options and parser limits
(``PARSER_CPU_SECONDS`` 10, ``PARSER_MEMORY_MB`` 1024), as a worker would. For each: the wall
time of the call, how it ended, how much the calling process grew, the parser process's peak
resident memory (as it reports it; 0 when it was killed), and the longest a thread of the
calling process waited to run.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import psutil
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import machine, table  # noqa: E402
from tests.support.sites import Site  # noqa: E402
from tests.support.ticker import Ticker  # noqa: E402
from tests.tools.web_fetch.test_hostile import CASES  # noqa: E402
from tools.api import Cancelled, Signal, ToolError  # noqa: E402
from tools.net import GuardedSession  # noqa: E402
from tools.parsers import ParserLimits, ParserPool  # noqa: E402
from tools.pdf import PdfIngester  # noqa: E402
from tools.testing import start_plugin, tool_context_for_test  # noqa: E402
from tools.web_fetch import plugin  # noqa: E402

PUBLIC_IP = "127.0.0.2"


def main() -> None:
    """Print the Markdown table of every hostile case."""
    pool = ParserPool(ParserLimits(), preload=["tools.web_fetch", "tools.pdf"])
    tool = start_plugin(plugin, {}, ingesters=(PdfIngester(),), parsers=pool)["web_fetch"]
    rows = []
    print(f"# {machine()}", file=sys.stderr)
    with Site(PUBLIC_IP) as site:
        for name, case in CASES.items():
            site.route("/case", case.serve)
            pool.close()  # fresh parser processes for each case, so peaks are the case's own
            pool = ParserPool(ParserLimits(), preload=["tools.web_fetch", "tools.pdf"])
            tool = start_plugin(plugin, {}, ingesters=(PdfIngester(),), parsers=pool)["web_fetch"]
            pool.run(len, "warm", signal=Signal(), what="warm-up")
            warm = requests.get(site.url("/case"), stream=True, allow_redirects=False, timeout=60)
            warm.close()  # the body is made before timing (a reply makes it before its headers)
            session = GuardedSession(address_allowed=lambda ip: ip == PUBLIC_IP)
            ctx, _ = tool_context_for_test(fetch=session, signal=Signal.after(tool.timeout_seconds))
            rss = psutil.Process().memory_info().rss
            ticker = Ticker()
            ticker.start()
            started = time.monotonic()
            try:
                output = tool.execute(tool.validate_input({"url": site.url("/case")}), ctx)
                ended = f"ok, {output['totalCharacters']:,} characters"
            except ToolError as error:
                ended = error.message.replace(site.url("/case"), "URL")
            except Cancelled:
                ended = f"deadline ({tool.timeout_seconds:g} s)"
            finally:
                elapsed = time.monotonic() - started
                ticker.done.set()
                ticker.join()
                session.close()
            grown = (psutil.Process().memory_info().rss - rss) / 2**20
            rows.append(
                [name, ended, elapsed, grown, pool.peak_rss_kb / 1024, ticker.longest * 1000]
            )
            print(rows[-1], file=sys.stderr)
    pool.close()
    header = ["case", "ended with", "s", "caller +MiB", "parser peak MiB", "longest stall ms"]
    print(table(header, rows))


if __name__ == "__main__":
    main()
