"""The shared search code: cleaning text, timeouts, cancelling, unreachable engines, and keys."""

from __future__ import annotations

import json
import logging
import threading
import time

import pytest
import requests

from tools.api import Cancelled, Signal, ToolError
from tools.web_search.engine import EngineRequest, Search
from tools.web_search.engines import brave, kagi, tavily
from tools.web_search.search import EngineFailed, clean_text, run_search
from tools.web_search.sessions import SearchSession

RESULTS = '{"results": [{"title": "T", "url": "https://example.com/", "content": "c"}]}'


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("std::vector<T,Allocator>  and\n\t<b> &amp;", "std::vector<T,Allocator> and <b> &amp;"),
        ("nul\x00byte and\x1bescape", "nul byte and escape"),
        ("half a pair \ud83d here", "half a pair here"),
        ("", ""),
    ],
)
def test_titles_and_snippets_are_kept_as_plain_text_with_whitespace_collapsed(raw, clean):
    """Regression: the shared cleaning read every engine's text as HTML, eating ``<T>``."""
    assert clean_text(raw) == clean


def test_an_engine_that_does_not_answer_in_time_is_a_tool_error(
    web_search, search, loopback, monkeypatch
):
    monkeypatch.setattr("tools.web_search.search.TIMEOUT_SECONDS", 0.3)

    def silent(handler):
        time.sleep(1.5)

    server = loopback(silent)
    with pytest.raises(ToolError) as info:
        search(web_search(engine="searxng", baseURL=server.url))
    assert info.value.message == "SearXNG did not answer within 0.3 seconds. Try again later."


def test_a_body_that_drips_past_the_timeout_is_a_tool_error(
    web_search, search, loopback, monkeypatch
):
    monkeypatch.setattr("tools.web_search.search.TIMEOUT_SECONDS", 0.5)

    def drip(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.end_headers()
        for _ in range(20):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.1)

    server = loopback(drip)
    with pytest.raises(ToolError) as info:
        search(web_search(engine="searxng", baseURL=server.url))
    assert "did not answer within 0.5 seconds" in info.value.message


def test_cancelling_the_turn_stops_a_search_that_is_reading(web_search, search, loopback):
    release = threading.Event()

    def hang(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        handler.wfile.write(b'{"results": [')
        handler.wfile.flush()
        release.wait(5)

    server = loopback(hang)
    signal = Signal()
    threading.Timer(0.3, signal.cancel).start()
    started = time.monotonic()
    try:
        with pytest.raises(Cancelled):
            search(web_search(engine="searxng", baseURL=server.url), signal=signal)
    finally:
        release.set()
    assert time.monotonic() - started < 3


def test_a_stop_ends_an_admin_search_still_waiting_for_the_engines_headers(
    web_search, search, loopback, monkeypatch
):
    """Regression (issue 24): a Stop left the search's thread waiting for the engine's
    response headers until its time-out; now the connection is shut down and the search ends.

    The time-out is made far longer than the test could wait, so only the stop can end it."""
    monkeypatch.setattr("tools.web_search.search.TIMEOUT_SECONDS", 600)
    arrived, disconnected, release = threading.Event(), threading.Event(), threading.Event()

    def never_sends_headers(handler):
        arrived.set()
        handler.connection.settimeout(60)
        try:
            if handler.rfile.read(1) == b"":  # the search shut its connection down
                disconnected.set()
        except OSError:
            disconnected.set()
        release.wait(60)

    server = loopback(never_sends_headers)
    tool = web_search(engine="searxng", baseURL=server.url)
    signal = Signal()
    outcome = []

    def run():
        try:
            search(tool, roles=["user"], signal=signal)
        except BaseException as exc:  # noqa: BLE001 - the outcome is what the test reads
            outcome.append(exc)

    searching = threading.Thread(target=run, daemon=True)
    searching.start()
    try:
        assert arrived.wait(60)
        signal.cancel()
        assert disconnected.wait(60), "the stop did not close the engine's connection"
        searching.join(60)
        assert not searching.is_alive(), "the search's thread is still blocked after the stop"
        assert [type(exc) for exc in outcome] == [Cancelled]
    finally:
        release.set()


def test_an_engines_cookies_for_one_users_search_are_never_sent_with_anothers(
    web_search, search, loopback, recording
):
    """Regression (issue 24): every user's searches of the admin's engine shared one HTTP
    session, so a cookie the engine set for one user went out with the next user's search."""
    body = recording("searxng_results.json").encode()

    def sets_a_cookie(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.send_header("Set-Cookie", "sid=alice-session; Path=/")
        handler.end_headers()
        handler.wfile.write(body)

    server = loopback(sets_a_cookie)
    tool = web_search(engine="searxng", baseURL=server.url)
    search(tool, user="alice")
    search(tool, user="bob")
    assert [headers.get("Cookie") for _method, _path, headers in server.seen] == [None, None]


def test_a_cancelled_signal_stops_the_search_before_it_is_sent(web_search, search, loopback):
    server = loopback(lambda handler: None)
    signal = Signal()
    signal.cancel()
    with pytest.raises(Cancelled):
        search(web_search(engine="searxng", baseURL=server.url), signal=signal)
    assert server.seen == []


class _LoopbackBrave(brave.BraveEngine):
    """Brave's request, key header and all, sent to a loopback server instead."""

    def __init__(self, url: str) -> None:
        self.url = url

    def request(self, search: Search) -> EngineRequest:
        sent = super().request(search)
        return EngineRequest(sent.method, self.url, sent.params, headers=sent.headers)


@pytest.mark.parametrize(("key", "odd"), [("sk-caf\u00e9", "'é'"), ("sk-\u20ac5", "'€'")])
def test_a_stored_key_a_header_cannot_carry_fails_the_search_in_words_unsent(
    loopback, replying, key, odd
):
    """Regression: a key stored before keys were checked went out with "é" as one Latin-1
    byte (the engine then said the key was rejected), and with "€" failed the search with a
    bare UnicodeEncodeError ("The tool web_search failed unexpectedly", and a traceback)."""
    server = loopback(replying("{}", 401))
    with pytest.raises(EngineFailed) as info:
        run_search(_LoopbackBrave(server.url), Search("q", 3, key), SearchSession(), Signal(), "t")
    assert info.value.message == (
        f"The Brave API key holds {odd}, which an HTTP header cannot carry: a key is ASCII "
        "letters, digits and punctuation. Copy it again from the engine's page and save it."
    )
    assert info.value.admin_only
    assert server.seen == []


def test_a_users_own_stored_key_a_header_cannot_carry_is_a_tool_error(
    web_search, search, engine_replies
):
    tool = web_search(engine="duckduckgo")
    settings = {"engine": "brave", "apiKey": "sk-caf\u00e9"}
    with pytest.raises(ToolError) as info:
        search(tool, settings=settings, roles=["user"])
    assert info.value.message.startswith("The Brave API key holds 'é', which an HTTP header")


def test_an_unreachable_engine_is_a_tool_error_naming_it(web_search, search, loopback):
    server = loopback(lambda handler: None)
    url = server.url
    server.shutdown()
    server.server_close()
    with pytest.raises(ToolError) as info:
        search(web_search(engine="searxng", baseURL=url))
    assert info.value.message == (
        "SearXNG could not be reached. Check its address, or try again later."
    )


def test_the_engines_explanation_is_cut_to_300_characters_with_whitespace_collapsed(
    web_search, search, engine_replies, api_key
):
    detail = "Something\n\n   went   wrong. " * 40
    engine_replies.get(brave.URL, json={"error": {"detail": detail}}, status=500)
    with pytest.raises(ToolError) as info:
        search(web_search(engine="brave", apiKey=api_key))
    said = info.value.message.split(' Brave said: "', 1)[1][:-1]
    assert len(said) == 300 and "  " not in said and said.startswith("Something went wrong.")


def _echoing(engine_id, key):
    """Error bodies that repeat the key back, in each engine's own shape."""
    return {
        "brave": {"error": {"detail": f"Token {key} is invalid", "code": "X"}},
        "tavily": {"detail": {"error": f"Unauthorized: {key}"}},
        "kagi": {"error": [{"code": 1, "msg": f"Bad token {key}"}]},
    }[engine_id]


KEYED = [("brave", "GET", brave.URL), ("tavily", "POST", tavily.URL), ("kagi", "GET", kagi.URL)]


@pytest.mark.parametrize(("engine_id", "method", "url"), KEYED)
@pytest.mark.parametrize("status", [400, 401, 403, 422, 429, 432, 433, 500, 200])
def test_no_key_appears_in_an_error_or_a_log_line_on_any_failure_path(
    web_search, search, engine_replies, api_key, caplog, engine_id, method, url, status
):
    caplog.set_level(logging.DEBUG)
    body = _echoing(engine_id, api_key)
    if status == 422 and engine_id == "brave":
        body["error"]["code"] = "SUBSCRIPTION_TOKEN_INVALID"
    engine_replies.add(method, url, body=json.dumps(body), status=status)
    with pytest.raises(ToolError) as info:
        search(web_search(engine=engine_id, apiKey=api_key))
    assert api_key not in info.value.message
    assert api_key not in str(info.value.__cause__ or "")
    assert api_key not in caplog.text


@pytest.mark.parametrize(("engine_id", "method", "url"), KEYED)
@pytest.mark.parametrize(
    "failure", [requests.ConnectTimeout(), requests.ConnectionError(), requests.ReadTimeout()]
)
def test_no_key_appears_when_an_engine_cannot_be_reached(
    web_search, search, engine_replies, api_key, caplog, engine_id, method, url, failure
):
    caplog.set_level(logging.DEBUG)
    failure.args = (f"failed with {api_key}",)
    engine_replies.add(method, url, body=failure)
    with pytest.raises(ToolError) as info:
        search(web_search(engine=engine_id, apiKey=api_key))
    assert api_key not in info.value.message and api_key not in caplog.text
    assert info.value.__cause__ is None


def test_no_key_appears_when_a_stored_engine_is_gone_or_a_key_is_missing(
    web_search, search, api_key, caplog
):
    caplog.set_level(logging.DEBUG)
    tool = web_search(engine="brave", apiKey=api_key)
    for settings in ({"engine": "gone", "apiKey": api_key}, {"engine": "kagi"}):
        with pytest.raises(ToolError) as info:
            search(tool, settings=settings, roles=["user"])
        assert api_key not in info.value.message
    assert api_key not in caplog.text


def test_a_huge_title_is_cut_to_what_its_citation_keeps(
    web_search, search, engine_replies, api_key
):
    """Regression: titles were never cut, so one engine's megabyte title reached the model."""
    page = {"title": "word " * 200_000, "url": "https://example.com/", "content": "c"}
    engine_replies.post(tavily.URL, json={"results": [page]})
    output, citations = search(web_search(engine="tavily", apiKey=api_key))
    title = output["results"][0]["title"]
    assert title.startswith("word word") and len(title) <= 1200
    assert title == citations[0].title


def test_one_page_under_several_spellings_of_its_url_is_one_result(
    web_search, search, engine_replies, api_key
):
    """Regression: the same page with another host case, a default port or a #fragment came
    back twice."""
    urls = [
        "https://Example.com/a#intro",
        "https://example.com/a",
        "HTTPS://EXAMPLE.COM:443/a",
        "https://example.com/A",
        "https://example.com",
        "https://example.com/",
    ]
    pages = [{"title": f"T{i}", "url": url, "content": ""} for i, url in enumerate(urls)]
    engine_replies.post(tavily.URL, json={"results": pages})
    output, citations = search(web_search(engine="tavily", apiKey=api_key, maxResults=10))
    assert [r["url"] for r in output["results"]] == [
        "https://Example.com/a#intro",
        "https://example.com/A",
        "https://example.com",
    ]
    assert [c.url for c in citations] == [r["url"] for r in output["results"]]


@pytest.mark.parametrize("charset", ["iso-8859-1", "windows-1252", "us-ascii"])
def test_utf8_json_labelled_latin1_is_read_as_utf8(
    web_search, search, engine_replies, api_key, charset
):
    """Regression: a UTF-8 answer labelled Latin-1 turned "™" into "â„¢" in every title."""
    page = {"title": "Requests: HTTP for Humans™ — café", "url": "https://a.example/"}
    engine_replies.post(
        tavily.URL,
        body=json.dumps({"results": [page]}, ensure_ascii=False).encode("utf-8"),
        content_type=f"application/json; charset={charset}",
    )
    output, _ = search(web_search(engine="tavily", apiKey=api_key))
    assert output["results"][0]["title"] == "Requests: HTTP for Humans™ — café"


def test_a_latin1_answer_labelled_latin1_stays_latin1(web_search, search, engine_replies, api_key):
    page = {"title": "Café crème", "url": "https://a.example/"}
    engine_replies.post(
        tavily.URL,
        body=json.dumps({"results": [page]}, ensure_ascii=False).encode("latin-1"),
        content_type="application/json; charset=iso-8859-1",
    )
    output, _ = search(web_search(engine="tavily", apiKey=api_key))
    assert output["results"][0]["title"] == "Café crème"
