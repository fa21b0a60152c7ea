"""Hostile pages and files through the real web_fetch tool, parsing in parser processes.

Every case must end within the tool's deadline plus a second, with output or a sentence; the
calling process's memory must grow by less than 100 MiB; and a thread of the same process
(standing in for the worker's other turns) must never wait more than 500 ms to run.
"""

from __future__ import annotations

import functools
import gzip
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psutil
import pytest
import requests

from tests.support.ticker import Ticker
from tests.tools.pdf.documents import make_damaged_pdf, make_pdf, make_shared_stream_pdf
from tools.api import Cancelled, Signal, ToolError
from tools.parsers import ParserLimits, ParserPool
from tools.pdf import PdfIngester

TIMEOUT_SECONDS = 3  # web_fetch's timeoutSeconds; the tool's deadline is 5 s more
CPU_SECONDS = 2
ARTICLE = "<p>" + "A sentence a reader came for. " * 40 + "</p>"


@pytest.fixture(scope="module")
def parsers() -> Iterator[ParserPool]:
    pool = ParserPool(
        ParserLimits(processes=2, cpu_seconds=CPU_SECONDS, memory_bytes=1 << 30),
        preload=["tools.web_fetch", "tools.pdf"],
    )
    yield pool
    pool.close()


def page(body: str, head: str = "<title>Hostile</title>") -> bytes:
    return f"<html><head>{head}</head><body>{body}</body></html>".encode()


def nested_matches() -> bytes:
    """Elements a rule looks for (styled, classed) nested in each other, then many more:
    libxml2's ``//*[@style]`` merged them in quadratic time (19 s for this page)."""
    styled = "<div class='note' style='color: red'>"
    nests = (styled * 8 + "x" + "</div>" * 8) * 20
    return page(nests + "<span class='note' style='color: red'></span>" * 35_000 + ARTICLE)


def many_tags_found_by_tag() -> bytes:
    """Thousands of each tag extraction removes by name (furniture, fallbacks): libxml2 merged
    the XPath union ``//nav | //header | //footer`` in quadratic time (4 s for these alone)."""
    tags = "<nav>a</nav><header>b</header><footer>c</footer><noscript>d</noscript>"
    return page(tags * 10_000 + ARTICLE)


def teasers_over_hidden_text() -> bytes:
    """Twenty "read more" teasers, each opening nested hidden wrappers of 165,000 characters."""
    parts = []
    for n in range(20):
        words = f"A review numbered {n} that opens with a line and goes on"
        hidden = "<div hidden>" * 8 + "more words " * 15_000 + words + " and on.</div>"
        parts.append(f"<p>{words}...</p>{hidden}" + "</div>" * 7)
    return page("".join(parts) + ARTICLE)


def gzip_bomb() -> bytes:
    out = gzip.compress(b"<html><body><p>" + b" " * 200_000_000, compresslevel=9)
    return out


def deflate_bomb() -> bytes:
    return zlib.compress(b"<html><body><p>" + b"A" * 200_000_000, 9)


@dataclass(frozen=True)
class Case:
    """A hostile response and what the call must end with: "ok", or words of its sentence."""

    serve: Callable[[Any], None]
    expect: str | tuple[str, ...]


def reply(content_type: str, make: Callable[[], bytes], **headers: str) -> Callable[[Any], None]:
    """Serve the body ``make()`` returns, made on first use (importing this module stays cheap:
    a parser process's forkserver may import the module that runs it)."""
    made = functools.cache(make)
    return lambda handler: handler.reply(200, content_type, made(), **headers)


def lying_length(declared: int, body: bytes) -> Callable[[Any], None]:
    def serve(handler: Any) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Content-Length", str(declared))
        handler.end_headers()
        handler.wfile.write(body)
        handler.close_connection = True

    return serve


# The sentences of a parse or download stopped by a limit: the parser's CPU limit, or the
# call's deadline, which the worker words as "did not finish within" (see workers.toolcalls).
SLOW = ("took longer than", "did not finish within")
CASES: dict[str, Case] = {
    "long space run in pre": Case(
        reply("text/html", lambda: page("<pre>" + " " * 4_000_000 + "x</pre>" + ARTICLE)), "ok"
    ),
    "deep nesting": Case(reply("text/html", lambda: page("<div>" * 300_000 + ARTICLE)), "ok"),
    "huge attribute": Case(
        reply("text/html", lambda: page(f'<div class="{"a" * 4_000_000}">{ARTICLE}</div>')), "ok"
    ),
    "huge title": Case(
        reply("text/html", lambda: page(ARTICLE, head=f"<title>{'T' * 1_000_000}</title>")), "ok"
    ),
    "entity soup": Case(
        reply("text/html", lambda: page("&amp;&#x41;&lt;" * 300_000 + ARTICLE)), ("ok", *SLOW)
    ),
    "many elements": Case(
        reply("text/html", lambda: page("<b>x</b>" * 550_000 + ARTICLE)), ("ok", *SLOW)
    ),
    "nested matches": Case(reply("text/html", nested_matches), "ok"),
    "many tags found by tag": Case(reply("text/html", many_tags_found_by_tag), "ok"),
    "teasers over hidden text": Case(reply("text/html", teasers_over_hidden_text), "ok"),
    "gzip bomb": Case(reply("text/html", gzip_bomb, Content_Encoding="gzip"), "ok"),
    "deflate bomb": Case(reply("text/html", deflate_bomb, Content_Encoding="deflate"), "ok"),
    "body that trickles forever": Case(
        lambda handler: handler.stream("text/html", b"<p>a", None, pause=0.2),
        f"took longer than {TIMEOUT_SECONDS} seconds",
    ),
    "endless redirects": Case(lambda handler: handler.redirect(302, "/case"), "after 5 redirects"),
    "content-length longer than the body": Case(
        lying_length(10_000_000, page(ARTICLE)), "the connection broke off"
    ),
    "content-length shorter than the body": Case(lying_length(200, page(ARTICLE) * 50), "ok"),
    "pdf pages sharing one huge stream": Case(
        reply("application/pdf", lambda: make_shared_stream_pdf(5000, 20_000)), ("ok", *SLOW)
    ),
    "pdf with thousands of pages": Case(
        reply("application/pdf", lambda: make_pdf([f"Page {n}" for n in range(2500)])),
        ("ok", *SLOW),
    ),
    "damaged pdf without a catalog": Case(
        reply("application/pdf", lambda: make_damaged_pdf(8000)), "damaged or not a PDF"
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_response_ends_in_time_with_output_or_a_sentence(
    name, site, dns, web_fetch, parsers
):
    case = CASES[name]
    site.route("/case", case.serve)
    run = web_fetch(
        {"timeoutSeconds": TIMEOUT_SECONDS, "maxFileBytes": 5_000_000},
        ingesters=(PdfIngester(),),
        parsers=parsers,
    )
    deadline = run.tool.timeout_seconds
    parsers.run(len, "warm", signal=Signal(), what="warm-up")  # a process is ready
    warm = requests.get(site.url("/case"), stream=True, allow_redirects=False, timeout=60)
    warm.close()  # the body is made before timing (a reply makes it before its headers)
    rss = psutil.Process().memory_info().rss
    ticker = Ticker()
    ticker.start()
    started = time.monotonic()
    try:
        outcome = run(site.url("/case"), signal=Signal.after(deadline))
    except ToolError as error:
        outcome = error.message
    except Cancelled:
        outcome = f"web_fetch did not finish within {deadline} seconds."
    finally:
        elapsed = time.monotonic() - started
        ticker.done.set()
        ticker.join()
    grown = psutil.Process().memory_info().rss - rss

    expected = (case.expect,) if isinstance(case.expect, str) else case.expect
    if isinstance(outcome, dict):
        assert "ok" in expected, f"{name}: expected a sentence, got output"
        assert len(outcome.get("title") or "") <= 1200
    else:  # "ok" is no sentence's words ("took longer" holds it)
        sentences = [words for words in expected if words != "ok"]
        assert any(words in outcome for words in sentences), f"{name}: {outcome}"
        assert "unexpectedly" not in outcome
    assert elapsed < deadline + 1, f"{name} took {elapsed:.1f} s"
    assert grown < 100 << 20, f"{name} grew the process by {grown >> 20} MiB"
    assert ticker.longest < 0.5, f"{name} stalled the process for {ticker.longest:.2f} s"


def test_a_huge_title_is_cut_and_not_repeated_in_every_part(site, dns, web_fetch, parsers):
    """Issue 10: a 1 MB <title> was repeated in every part of the output."""
    site.serve("/t", "text/html", page(ARTICLE, head=f"<title>{'T ' * 500_000}</title>"))
    output = web_fetch(parsers=parsers)(site.url("/t"))
    assert len(output["title"]) <= 1200
    assert output["totalCharacters"] < 5_000


def test_a_page_that_spins_the_parser_is_a_sentence_naming_the_url(site, dns, web_fetch):
    """The CPU limit stops extraction; the sentence says which page took too long."""
    pool = ParserPool(ParserLimits(processes=1, cpu_seconds=1))
    try:
        site.serve("/slow", "text/html", page("<b>x</b>" * 550_000 + ARTICLE))
        with pytest.raises(ToolError) as error:
            web_fetch(parsers=pool)(site.url("/slow"))
    finally:
        pool.close()
    assert error.value.message == f"Reading {site.url('/slow')} took longer than 1 second."
