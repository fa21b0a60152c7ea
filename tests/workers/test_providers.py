"""The OpenAI-compatible provider against the loopback fake model: streams, tools, errors."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from tests.support.fake_model import FakeModel, Reply
from tools.api import Signal
from workers.providers import (
    Finished,
    OpenAICompatibleProvider,
    ProviderCancelled,
    ProviderError,
    ProviderEvent,
    SourceEvent,
    TextDelta,
    ToolCallRequest,
    ToolSpec,
    Usage,
)
from workers.providers.chunks import DONE, EventStream, sse_lines

KEY = "sk-test-0123456789abcdef"
HELLO = [{"role": "user", "content": "Hello"}]
SEARCH = ToolSpec(
    "web_search",
    "Search the web.",
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)


class RecordedWaits:
    """A ``wait`` that records the delays instead of sleeping."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float, signal: Signal) -> None:
        self.delays.append(seconds)


@pytest.fixture
def fake() -> Iterator[FakeModel]:
    with FakeModel() as server:
        yield server


@pytest.fixture
def waits() -> RecordedWaits:
    return RecordedWaits()


@pytest.fixture
def provider(fake: FakeModel, waits: RecordedWaits) -> Iterator[OpenAICompatibleProvider]:
    with OpenAICompatibleProvider("Fakery", fake.base_url, KEY, wait=waits) as client:
        yield client


def collect(events: Iterator[ProviderEvent]) -> list[ProviderEvent]:
    return list(events)


def text_of(events: list[ProviderEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def failure(provider: OpenAICompatibleProvider, model: str = "fake-model") -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        collect(provider.stream(model, HELLO))
    return caught.value


def stream_until_failure(
    provider: OpenAICompatibleProvider,
) -> tuple[list[ProviderEvent], ProviderError]:
    """The events a stream yielded before it raised ProviderError, and the error."""
    received: list[ProviderEvent] = []
    with pytest.raises(ProviderError) as caught:
        for event in provider.stream("fake-model", HELLO):
            received.append(event)
    return received, caught.value


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_streamed_text_arrives_in_pieces_then_usage_and_finish(fake, provider):
    fake.script(Reply.text("Hello world", chunks=5, usage=(12, 7)))
    events = collect(provider.stream("fake-model", HELLO))
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == 5
    assert text_of(events) == "Hello world"
    assert events[-2:] == [Usage(12, 7), Finished("stop")]


def test_fragmented_tool_call_arguments_are_assembled_in_order(fake, provider):
    fake.script(
        Reply.tool_calls(
            [("web_search", {"query": "lookout"}), ("web_fetch", {"url": "https://a.example/"})],
            text="Let me look.",
            argument_chunks=4,
        )
    )
    events = collect(provider.stream("fake-model", HELLO, [SEARCH]))
    calls = [e for e in events if isinstance(e, ToolCallRequest)]
    assert text_of(events) == "Let me look."
    assert [(c.name, c.arguments) for c in calls] == [
        ("web_search", {"query": "lookout"}),
        ("web_fetch", {"url": "https://a.example/"}),
    ]
    assert all(c.id.startswith("call_") for c in calls) and calls[0].id != calls[1].id
    assert events[-1] == Finished("tool_calls")


def test_arguments_that_are_not_a_json_object_come_back_as_none_with_the_raw_text(fake, provider):
    fake.script(Reply.tool_calls([("web_search", '{"query": "unfinished'), ("web_fetch", "[1]")]))
    calls = [
        e for e in collect(provider.stream("fake-model", HELLO)) if isinstance(e, ToolCallRequest)
    ]
    assert [(c.arguments, c.raw_arguments) for c in calls] == [
        (None, '{"query": "unfinished'),
        (None, "[1]"),
    ]


def test_tools_are_sent_only_when_there_are_some(fake, provider):
    collect(provider.stream("fake-model", HELLO, []))
    collect(provider.stream("fake-model", HELLO, [SEARCH]))
    without, with_tools = (r.json for r in fake.chat_requests())
    assert "tools" not in without
    assert with_tools["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "web_search",
                "description": "Search the web.",
                "parameters": SEARCH.parameters,
            },
        }
    ]
    assert with_tools["messages"] == HELLO
    assert "tool_choice" not in without and with_tools["tool_choice"] == "auto"
    assert with_tools["stream"] is True and with_tools["stream_options"] == {"include_usage": True}
    assert fake.last_request().headers["authorization"] == f"Bearer {KEY}"


def test_provider_citations_become_source_events(fake, provider):
    fake.script(Reply.text("See.", sources=[("https://a.example/", "A")]))
    events = collect(provider.stream("fake-model", HELLO))
    assert SourceEvent("https://a.example/", "A") in events


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, "The provider Fakery rejected its API key. An admin can update it in the provider"),
        (403, "The provider Fakery rejected its API key."),
        (404, "The model fake-model is not available from Fakery."),
        (429, "The provider Fakery rate limit was reached. Wait a minute and try again."),
        (500, "The provider Fakery failed (HTTP 500). Fakery said: "),
        (502, "The provider Fakery failed (HTTP 502)."),
    ],
)
def test_http_errors_become_sentences_without_the_key(fake, provider, status, expected):
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}."}}
    fake.script(*[Reply.error(status, echo)] * 4)
    error = failure(provider)
    assert error.message.startswith(expected)
    assert error.status == status
    assert KEY not in str(error) and KEY not in repr(error.args)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            {"error": {"message": "model requires more system memory (9.1 GiB) than is available"}},
            ' Fakery said: "model requires more system memory (9.1 GiB) than is available".',
        ),
        ("<html>Bad gateway</html>", ""),
    ],
)
def test_a_server_error_quotes_the_provider_and_says_what_to_do(fake, provider, body, said):
    """A provider's 500 read "failed (HTTP 500). Try again later." and dropped the provider's
    own words, which name what an admin can fix."""
    fake.script(*[Reply.error(500, body)] * 4)
    assert failure(provider).message == (
        f"The provider Fakery failed (HTTP 500).{said} Try again later; if it keeps failing, "
        "ask an admin to check the provider."
    )


def test_other_refusals_quote_the_provider_with_the_key_redacted(fake, provider):
    fake.script(Reply.error(400, {"error": {"message": f"Context too long for key {KEY}."}}))
    error = failure(provider)
    assert error.message == (
        "The provider Fakery refused the request (HTTP 400). Fakery said: "
        '"Context too long for key [redacted]."'
    )
    assert not error.retryable


def test_rate_limit_and_server_errors_before_the_first_token_are_retried_with_backoff(
    fake, provider, waits
):
    fake.script(Reply.error(429), Reply.error(503), Reply.error(500), Reply.text("Finally."))
    assert text_of(collect(provider.stream("fake-model", HELLO))) == "Finally."
    assert waits.delays == [0.5, 1.0, 2.0]
    assert len(fake.chat_requests()) == 4


def test_retries_stop_after_three(fake, provider, waits):
    fake.script(*[Reply.error(503)] * 5)
    assert failure(provider).retryable
    assert len(fake.chat_requests()) == 4 and len(waits.delays) == 3


def test_retry_after_is_honoured_up_to_its_cap(fake, provider, waits):
    fake.script(Reply.error(429, headers={"Retry-After": "2"}), Reply.text("ok"))
    assert text_of(collect(provider.stream("fake-model", HELLO))) == "ok"
    fake.script(Reply.error(429, headers={"Retry-After": "120"}), Reply.text("never"))
    assert "rate limit" in failure(provider).message
    assert waits.delays == [2.0]


def test_an_error_after_the_first_token_ends_the_stream_without_a_retry(fake, provider, waits):
    fake.script(Reply.text("Half an ans", then="error"), Reply.text("duplicate"))
    received, error = stream_until_failure(provider)
    assert text_of(received) == "Half an ans"
    assert error.message.startswith("The provider Fakery reported an error during the reply")
    assert len(fake.chat_requests()) == 1 and waits.delays == []


def test_a_connection_dropped_mid_reply_is_reported_as_broken(fake, provider):
    fake.script(Reply.text("Half", then="disconnect"))
    error = failure(provider)
    assert (
        error.message == "The connection to the provider Fakery broke during the reply. Try again."
    )
    assert len(fake.chat_requests()) == 1


def test_an_unreachable_provider_is_retried_then_named_without_its_address(waits):
    """Issue 24: a user read the provider's base URL, credentials in it and all, when the
    provider could not be reached; users read its name, admins its address without them."""
    port = closed_port()
    base_url = f"http://lookout:s3cret-pass@127.0.0.1:{port}/v1?api-key=q-secret"
    with OpenAICompatibleProvider("Local", base_url, KEY, wait=waits) as provider:
        error = failure(provider)
        admin_error = failure_of(provider.list_models)
    assert error.message == (
        "Lookout could not reach the provider Local. Try again later; if it keeps failing, ask "
        "an admin to check that it is running and its base URL."
    )
    assert error.retryable and len(waits.delays) == 3
    assert admin_error.message.startswith(
        f"Lookout could not reach the provider Local at http://127.0.0.1:{port}/v1. "
    )
    for secret in ("s3cret-pass", "q-secret", "lookout:"):
        assert secret not in error.message and secret not in admin_error.message


def test_a_silent_provider_times_out_with_a_clear_message(fake, waits):
    fake.script(Reply.hang())
    with OpenAICompatibleProvider("Slow", fake.base_url, KEY, timeout=0.3, wait=waits) as provider:
        error = failure(provider)
    assert error.message.startswith("The provider Slow did not answer in time.")
    assert waits.delays == []


def test_an_unreadable_stream_is_reported(fake, provider):
    fake.script(Reply.raw("data: {this is not json\n\n"), Reply.raw('{"not": "a stream"}'))
    assert "sent a reply Lookout could not read" in failure(provider).message
    assert "sent a reply Lookout could not read" in failure(provider).message


def test_cancelling_mid_stream_closes_the_stream(fake, provider):
    fake.script(Reply.forever(delay=0.02))
    signal = Signal()
    received = 0
    with pytest.raises(ProviderCancelled):
        for _ in provider.stream("fake-model", HELLO, signal=signal):
            received += 1
            if received == 3:
                signal.cancel()
    assert received == 3
    fake.wait_for_disconnects(1, timeout=2)


def test_cancelling_while_the_provider_is_silent_closes_the_stream_quickly(fake, provider):
    fake.script(Reply.hang())
    signal = Signal()
    threading.Timer(0.2, signal.cancel).start()
    started = time.monotonic()
    with pytest.raises(ProviderCancelled):
        collect(provider.stream("fake-model", HELLO, signal=signal))
    assert time.monotonic() - started < 0.2 + 0.5
    fake.wait_for_disconnects(1, timeout=2)


def test_cancelling_during_a_retry_wait_wakes_it_at_once(fake):
    fake.script(Reply.error(503), Reply.text("never"))
    signal = Signal()
    threading.Timer(0.1, signal.cancel).start()
    started = time.monotonic()
    with OpenAICompatibleProvider("Fakery", fake.base_url, KEY, backoff=5.0) as provider:
        with pytest.raises(ProviderCancelled):
            collect(provider.stream("fake-model", HELLO, signal=signal))
    assert time.monotonic() - started < 1.0
    assert len(fake.chat_requests()) == 1


def test_listing_models_tests_the_connection(fake, provider):
    assert provider.list_models() == ["fake-model", "fake-model-no-tools"]
    fake.script(Reply.error(404))
    assert failure_of(provider.list_models).message.startswith(
        f"The provider Fakery has no model list at {fake.base_url}/models."
    )


def test_a_wrong_key_fails_the_connection_test():
    with FakeModel(api_key="sk-right-key") as fake:
        with OpenAICompatibleProvider("Fakery", fake.base_url, KEY) as provider:
            error = failure_of(provider.list_models)
    assert error.message.startswith("The provider Fakery rejected its API key.")


def test_a_keyless_provider_never_gets_the_environment_key(fake, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    with OpenAICompatibleProvider("Ollama", fake.base_url, None) as provider:
        collect(provider.stream("fake-model", HELLO))
    assert "sk-from-the-environment" not in fake.last_request().headers["authorization"]


def failure_of(call: Callable[[], object]) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        call()
    return caught.value


def test_comment_lines_and_multi_line_data_are_read_as_server_sent_events(fake, provider):
    chunk = '{"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}]}'
    first, second = chunk.split(", ", 1)  # one event whose data spans two lines
    fake.script(Reply.raw(f": ping\n\ndata: {first},\ndata: {second}\n\ndata: [DONE]\n\n"))
    assert collect(provider.stream("fake-model", HELLO)) == [
        TextDelta("Hi"),
        Usage(2, 1, estimated=True),
        Finished("stop"),
    ]


def test_events_ended_by_crlf_or_cr_are_read_like_those_ended_by_lf(fake, provider):
    chunk = '{"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}]}'
    fake.script(Reply.raw(f": ping\r\n\r\ndata: {chunk}\r\rdata: [DONE]\r\n\r\n"))
    assert collect(provider.stream("fake-model", HELLO)) == [
        TextDelta("Hi"),
        Usage(2, 1, estimated=True),
        Finished("stop"),
    ]


def test_a_line_cut_between_reads_is_read_whole_even_inside_a_character_or_a_crlf():
    pieces = [b"data: caf", "é".encode()[:1], "é".encode()[1:] + b"\r", b"\n\r", b"\ndata: x"]
    assert list(sse_lines(pieces)) == ["data: café", "", "data: x"]


def test_the_events_one_read_holds_come_together_and_end_at_done():
    reads = [b"data: a\n\ndata: b\n\n", b": ping\n\ndata: c\n", b"\ndata: [DONE]\n\ndata: x\n\n"]
    assert list(EventStream().batches(reads)) == [["a", "b"], ["c", DONE]]


def test_tokens_that_come_while_a_provider_waits_between_reads_come_as_one_event(fake):
    fake.script(Reply.text("one two three four five six", chunks=6, delay=0.01))
    # The wait is 40 times the 50 ms the rest of the answer takes to be written, so a busy
    # machine that holds the fake server's thread a while still has it all in the socket.
    with OpenAICompatibleProvider("Fakery", fake.base_url, KEY, read_interval=2.0) as provider:
        events = collect(provider.stream("fake-model", HELLO))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(deltas) == "one two three four five six"
    assert len(deltas) <= 3  # the first two tokens' reads, then the rest in one
    assert events[-1] == Finished("stop")


def test_the_read_after_the_first_token_waits_like_the_others(fake):
    """Regression: the read after the first token's was taken at once, a wake-up for the
    second token alone (and one of the text thread, woken for text held within the first
    send's batch)."""
    fake.script(Reply.text("one two three", chunks=3, delay=0.5))
    # Tokens half a second apart: the second is long in coming when the first read is done,
    # and the last is in by the second read however a busy machine delays the server (3 s).
    with OpenAICompatibleProvider("Fakery", fake.base_url, KEY, read_interval=4.0) as provider:
        events = collect(provider.stream("fake-model", HELLO))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(deltas) == "one two three"
    assert len(deltas) == 2  # the first token's read, then the rest after the wait
    assert events[-1] == Finished("stop")


def test_a_stop_wakes_a_provider_waiting_between_reads(fake):
    fake.script(Reply.forever(delay=0.01))
    signal = Signal()
    with OpenAICompatibleProvider("Fakery", fake.base_url, KEY, read_interval=60.0) as provider:
        started = time.monotonic()
        with pytest.raises(ProviderCancelled):
            for _ in provider.stream("fake-model", HELLO, signal=signal):
                if not signal.cancelled:
                    threading.Timer(0.2, signal.cancel).start()
        # Not the minute it would wait: a busy machine may take seconds, not that.
        assert time.monotonic() - started < 20


def test_an_error_event_before_the_first_token_is_retried(fake, provider, waits):
    fake.script(Reply.text("", then="error"), Reply.text("Recovered."))
    assert text_of(collect(provider.stream("fake-model", HELLO))) == "Recovered."
    assert waits.delays == [0.5]


def test_a_stream_closed_cleanly_mid_answer_is_cut_off_not_finished(fake, provider, waits):
    """Regression: a proxy that closed the stream cleanly when its upstream died (neither a
    finish_reason nor [DONE]) was read as a finished answer, recorded "completed"."""
    fake.script(Reply.text("The answer is forty", then="close"), Reply.text("duplicate"))
    received, error = stream_until_failure(provider)
    assert text_of(received) == "The answer is forty"
    assert not any(isinstance(e, Finished) for e in received)
    assert error.message == (
        "The provider Fakery closed the stream before the answer was finished. Try again."
    )
    assert len(fake.chat_requests()) == 1 and waits.delays == []


def test_a_stream_closed_before_its_first_token_is_retried(fake, provider, waits):
    fake.script(Reply.text("", then="close"), Reply.text("Recovered."))
    assert text_of(collect(provider.stream("fake-model", HELLO))) == "Recovered."
    assert waits.delays == [0.5]


def test_a_finish_reason_without_done_ends_a_stream_normally(fake, provider):
    start = '{"choices": [{"index": 0, "delta": {"content": "Whole."}}]}'
    ending = '{"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
    fake.script(Reply.raw(f"data: {start}\n\ndata: {ending}"))
    events = collect(provider.stream("fake-model", HELLO))
    assert events[0] == TextDelta("Whole.") and events[-1] == Finished("stop")


def test_a_bare_done_without_a_finish_reason_is_a_cut_answer(fake, provider, waits):
    """Issue 30: llama.cpp's server ends a stream it interrupts for a newer request with a
    bare ``data: [DONE]``; the 10-token fragment was stored as a completed answer."""
    fake.script(Reply.text("The answer is", chunks=3, then="done"), Reply.text("duplicate"))
    received, error = stream_until_failure(provider)
    assert text_of(received) == "The answer is"
    assert not any(isinstance(e, Finished) for e in received)
    assert error.message == (
        "The provider Fakery closed the stream before the answer was finished. Try again."
    )
    assert len(fake.chat_requests()) == 1


def test_an_answer_at_its_length_limit_is_cut_with_the_limit_named(fake, provider):
    """Issue 30: ``finish_reason: "length"`` was ignored and the answer stored as complete."""
    fake.script(Reply.text("A long answer that goes on and", then="length"))
    received = []
    with pytest.raises(ProviderError) as caught:
        for event in provider.stream("fake-model", HELLO, max_tokens=8):
            received.append(event)
    assert text_of(received) == "A long answer that goes on and"
    assert caught.value.message.startswith("The model reached its length limit of 8 tokens.")
    assert fake.last_request().json["max_tokens"] == 8


def test_an_empty_stream_says_the_answer_was_empty_and_why_it_may_be(fake, provider, waits):
    """Issue 30: an HTTP 200 with nothing in it (llama.cpp's answer to a prompt longer than
    its context) read "sent a reply Lookout could not read ... OpenAI-compatible"."""
    fake.script(Reply.empty(), Reply.raw("data: [DONE]\n\n"))
    for _ in range(2):
        error = failure(provider)
        assert error.message.startswith(
            "The provider Fakery sent an empty answer. The prompt may exceed the model's context"
        )
        assert "OpenAI-compatible" not in error.message
    assert waits.delays == []


def test_a_server_that_sends_no_usage_gets_an_estimate_marked_as_such(fake, provider):
    """Issue 30: a server that ignores ``include_usage`` (llama.cpp) left every turn's usage
    null, and the Usage page at 0 tokens."""
    fake.script(Reply.text("x" * 400, usage=None))
    messages = [{"role": "user", "content": "y" * 800}]
    usage = [e for e in collect(provider.stream("fake-model", messages)) if isinstance(e, Usage)]
    assert usage == [Usage(200, 100, estimated=True)]


def test_keep_alive_comments_do_not_hold_a_model_past_its_first_token_bound(fake, waits):
    """Issue 30: a busy server's keep-alive pings reset the read timeout, so a turn queued
    behind another waited 90 s and more without failing."""
    fake.script(Reply.hang(pings=0.1))
    with OpenAICompatibleProvider(
        "Busy", fake.base_url, KEY, timeout=5, first_token_timeout=0.5, wait=waits
    ) as provider:
        error = failure(provider)
    assert error.message.startswith(
        "The provider Busy did not start answering within 0.5 seconds; it may be busy"
    )
    assert error.timed_out and waits.delays == []
    fake.wait_for_disconnects(1, timeout=5)


def test_the_whole_answer_is_bounded_even_while_tokens_keep_coming(fake, waits):
    fake.script(Reply.forever(delay=0.05))
    with OpenAICompatibleProvider(
        "Chatty", fake.base_url, KEY, timeout=5, answer_timeout=0.5, wait=waits
    ) as provider:
        received, error = stream_until_failure(provider)
    assert text_of(received).startswith("tick ")
    assert error.message.startswith("The provider Chatty was still answering after 0.5 seconds")
    fake.wait_for_disconnects(1, timeout=5)


def test_a_provider_echoing_its_base_url_and_credentials_has_them_redacted(fake, waits):
    """Issue 24: users see the provider's name, never its base URL or what is in it."""
    host = fake.base_url.removeprefix("http://")
    base_url = f"http://lookout:s3cret-pass@{host}"
    said = f"Bad request to {base_url}/chat/completions as lookout:s3cret-pass"
    fake.script(Reply.error(400, {"error": {"message": said}}))
    with OpenAICompatibleProvider("Local", base_url, KEY, wait=waits) as provider:
        error = failure(provider)
    assert error.message.startswith("The provider Local refused the request (HTTP 400). Local said")
    assert "s3cret-pass" not in error.message and base_url not in error.message


def test_a_stored_key_a_header_cannot_carry_fails_the_call_as_a_provider_error(fake):
    """A key stored before the admin API refused such keys: the call ends as a ProviderError
    (the turn fails in words) and the model is never sent a request, nor the worker a crash."""
    with OpenAICompatibleProvider("Fakery", fake.base_url, "sk-caf\u00e9") as client:
        error = failure(client)
    assert "caf\u00e9" not in str(error)
    assert fake.requests == []
