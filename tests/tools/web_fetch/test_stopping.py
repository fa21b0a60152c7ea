"""Stopping a download at once: turn cancellation, the turn's deadline, and timeoutSeconds."""

from __future__ import annotations

import threading
import time

import pytest

from tools.api import Cancelled, Signal, ToolError


def _drip(handler):
    """An endless body, a little at a time, with no Content-Length."""
    handler.stream("text/plain", b"drip\n", None, pause=0.05)


def _stall(handler):
    """A few bytes of a long body, then silence: the client blocks inside a read."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Content-Length", "1000000")
    handler.end_headers()
    handler.wfile.write(b"first bytes\n")
    handler.wfile.flush()
    time.sleep(10)


def _silent(handler):
    """No answer at all: the client waits for the status line."""
    time.sleep(10)


def _cancel_later(signal: Signal, seconds: float) -> threading.Thread:
    thread = threading.Thread(target=lambda: (time.sleep(seconds), signal.cancel()))
    thread.start()
    return thread


@pytest.mark.parametrize("body", [_drip, _stall], ids=["endless", "stalled"])
def test_an_endless_body_is_stopped_by_cancellation(site, dns, web_fetch, body):
    site.route("/body", body)
    signal = Signal()
    canceller = _cancel_later(signal, 0.5)
    started = time.monotonic()
    with pytest.raises(Cancelled):
        web_fetch()(site.url("/body"), signal=signal)
    assert time.monotonic() - started < 1.5
    canceller.join()


@pytest.mark.parametrize("body", [_drip, _stall], ids=["endless", "stalled"])
def test_an_endless_body_is_stopped_by_the_deadline(site, dns, web_fetch, body):
    """The worker reports Cancelled on a tripped deadline as the call's timeout."""
    site.route("/body", body)
    signal = Signal.after(0.6)
    started = time.monotonic()
    with pytest.raises(Cancelled):
        web_fetch()(site.url("/body"), signal=signal)
    assert time.monotonic() - started < 1.6
    assert signal.reason == "timeout"


def test_the_server_sees_the_client_stop_reading_when_cancelled(site, dns, web_fetch):
    site.route("/body", _drip)
    signal = Signal()
    canceller = _cancel_later(signal, 0.3)
    with pytest.raises(Cancelled):
        web_fetch()(site.url("/body"), signal=signal)
    assert site.client_gone.wait(5)
    canceller.join()


@pytest.mark.parametrize("body", [_drip, _stall, _silent], ids=["endless", "stalled", "silent"])
def test_a_fetch_longer_than_timeout_seconds_is_a_tool_error(site, dns, web_fetch, body):
    site.route("/body", body)
    url = site.url("/body")
    started = time.monotonic()
    with pytest.raises(ToolError) as error:
        web_fetch({"timeoutSeconds": 1})(url)
    assert error.value.message == f"Fetching {url} took longer than 1 second."
    assert time.monotonic() - started < 2.5


def test_a_cancelled_turn_downloads_nothing(site, dns, web_fetch):
    site.route("/page", lambda h: h.reply(200, "text/plain", b"never"))
    signal = Signal()
    signal.cancel()
    with pytest.raises(Cancelled):
        web_fetch()(site.url("/page"), signal=signal)
    assert site.requests == []
