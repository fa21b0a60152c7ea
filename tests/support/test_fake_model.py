"""The fake model server itself: scripted replies, recorded requests, streams and disconnects."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.fake_model import FakeModel, Reply


@pytest.fixture
def fake() -> Iterator[FakeModel]:
    with FakeModel() as server:
        yield server


def connect(fake: FakeModel) -> http.client.HTTPConnection:
    address = urlsplit(fake.base_url)
    return http.client.HTTPConnection(address.hostname, address.port, timeout=10)


def post(fake: FakeModel, body: dict[str, Any]) -> tuple[int, dict[str, str], str]:
    connection = connect(fake)
    try:
        payload = json.dumps(body)
        headers = {"Content-Type": "application/json", "Authorization": "Bearer sk-x"}
        connection.request("POST", "/v1/chat/completions", payload, headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode()
    finally:
        connection.close()


def chat(content: str = "Hi", stream: bool = False, **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": content}], "stream": stream}


def events(body: str) -> list[Any]:
    datas = [line[6:] for line in body.splitlines() if line.startswith("data: ")]
    return [data if data == "[DONE]" else json.loads(data) for data in datas]


def answer_text(body: str) -> str:
    return json.loads(body)["choices"][0]["message"]["content"]


def test_every_request_is_recorded_with_headers_and_body(fake):
    post(fake, chat("first"))
    post(fake, chat("second"))
    requests = fake.wait_for_requests(2)
    assert [r.json["messages"][0]["content"] for r in requests] == ["first", "second"]
    assert fake.last_request().headers["authorization"] == "Bearer sk-x"
    assert (fake.last_request().method, fake.last_request().path) == (
        "POST",
        "/v1/chat/completions",
    )


def test_scripted_replies_are_served_in_order_then_the_default(fake):
    fake.script(Reply.text("one"), Reply.text("two"))
    answers = [answer_text(post(fake, chat())[2]) for _ in range(3)]
    assert answers == ["one", "two", "Hello from the fake model."]


def test_a_responder_answers_when_the_script_is_empty(fake):
    fake.responder = lambda request: Reply.text(request["messages"][-1]["content"].upper())
    fake.script(Reply.text("scripted"))
    assert answer_text(post(fake, chat("shout"))[2]) == "scripted"
    assert answer_text(post(fake, chat("shout"))[2]) == "SHOUT"


def test_a_non_streamed_tool_call_reply_has_the_openai_shape(fake):
    fake.script(Reply.tool_calls([("web_search", {"query": "x"})], usage=(3, 4)))
    body = json.loads(post(fake, chat())[2])
    call = body["choices"][0]["message"]["tool_calls"][0]
    assert call["function"] == {"name": "web_search", "arguments": '{"query": "x"}'}
    assert body["choices"][0]["finish_reason"] == "tool_calls"
    assert body["usage"]["prompt_tokens"] == 3 and body["usage"]["completion_tokens"] == 4


def test_an_error_reply_sends_its_status_body_and_headers(fake):
    fake.script(Reply.error(429, {"error": {"message": "Slow down."}}, {"Retry-After": "3"}))
    status, headers, body = post(fake, chat())
    assert (status, headers["Retry-After"]) == (429, "3")
    assert json.loads(body) == {"error": {"message": "Slow down."}}


def test_a_streamed_reply_is_chunked_and_ends_with_done_and_usage_when_asked(fake):
    fake.script(Reply.text("abcdef", chunks=3, usage=(7, 2)), Reply.text("abcdef"))
    request = chat(stream=True)
    request["stream_options"] = {"include_usage": True}
    with_usage = events(post(fake, request)[2])
    without_usage = events(post(fake, chat(stream=True))[2])
    contents = [e["choices"][0]["delta"].get("content") for e in with_usage[1:4]]
    assert contents == ["ab", "cd", "ef"]
    assert with_usage[-2]["usage"]["prompt_tokens"] == 7 and with_usage[-1] == "[DONE]"
    assert "usage" not in without_usage[-2]


def test_a_client_closing_an_endless_stream_is_counted_as_a_disconnect(fake):
    fake.script(Reply.forever(delay=0.01))
    connection = connect(fake)
    connection.request("POST", "/v1/chat/completions", json.dumps(chat(stream=True)))
    response = connection.getresponse()
    response.read1(64)
    connection.sock.close()  # close the socket itself, as a cancelled client does
    connection.close()
    fake.wait_for_disconnects(1, timeout=2)
    assert fake.open_streams == 0


def test_stopping_ends_a_hanging_stream_promptly():
    fake = FakeModel().start()
    fake.script(Reply.hang())
    connection = connect(fake)
    connection.request("POST", "/v1/chat/completions", json.dumps(chat(stream=True)))
    response = connection.getresponse()
    started = time.monotonic()
    fake.stop()
    try:
        with pytest.raises(http.client.IncompleteRead):
            response.read()  # the stream is cut, not finished
    finally:
        connection.close()
    assert time.monotonic() - started < 2


def test_two_hundred_concurrent_streams_are_all_answered(fake):
    fake.default = Reply.text("x" * 20, chunks=10, delay=0.01)
    started = time.monotonic()
    with ThreadPoolExecutor(200) as pool:
        bodies = list(pool.map(lambda _: post(fake, chat(stream=True))[2], range(200)))
    assert all(events(body)[-1] == "[DONE]" for body in bodies)
    assert len(fake.requests) == 200
    assert time.monotonic() - started < 5


def test_a_stream_broken_by_disconnect_never_ends_its_chunked_body(fake):
    fake.script(Reply.text("Half an answer", then="disconnect"))
    connection = connect(fake)
    try:
        connection.request("POST", "/v1/chat/completions", json.dumps(chat(stream=True)))
        response = connection.getresponse()
        with pytest.raises(http.client.IncompleteRead) as cut:
            response.read()
    finally:
        connection.close()
    assert "Half an answer" in cut.value.partial.decode()


def test_a_clean_close_ends_the_body_without_a_finish_reason_or_done(fake):
    fake.script(Reply.text("Half an answer", then="close"))
    status, _headers, body = post(fake, chat(stream=True))
    sent = events(body)
    assert status == 200 and "[DONE]" not in sent
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in sent) == "Half an answer"
    assert all(e["choices"][0]["finish_reason"] is None for e in sent)


def test_silence_holds_the_rest_of_the_stream_back_for_its_seconds(fake):
    fake.script(Reply.text("Before the pause", silence=0.5))
    started = time.monotonic()
    status, _headers, body = post(fake, chat(stream=True))
    assert status == 200 and events(body)[-1] == "[DONE]"
    assert time.monotonic() - started >= 0.5


def test_an_unknown_break_is_refused_when_scripted():
    with pytest.raises(AssertionError, match="no break named 'explode'"):
        Reply.text("x", then="explode")


def test_the_fake_can_end_as_real_servers_do_bare_done_length_pings_and_empty(fake):
    fake.script(
        Reply.text("ab", then="done"),
        Reply.text("ab", then="length"),
        Reply.text("ab", silence=0.25, pings=0.1),
        Reply.empty(),
    )
    bare = events(post(fake, chat(stream=True))[2])
    assert bare[-1] == "[DONE]"
    assert all(e["choices"][0]["finish_reason"] is None for e in bare[:-1])
    cut = events(post(fake, chat(stream=True))[2])
    assert cut[-2]["choices"][0]["finish_reason"] == "length"
    assert post(fake, chat(stream=True))[2].count(": ping\n\n") == 2
    status, headers, body = post(fake, chat(stream=True))
    assert (status, headers["Content-Type"], body) == (200, "text/event-stream", "")


def test_the_fake_can_refuse_as_real_servers_do():
    with FakeModel(
        models=["m"],
        rejects_null_content=True,
        refuses_tools={"m"},
        context_chars=10,
        contexts={"m": 512},
    ) as fake:
        null = chat()
        null["messages"].append({"role": "assistant", "content": None, "tool_calls": []})
        assert post(fake, null)[0] == 500
        assert post(fake, {**chat(), "tools": [{"type": "function"}]})[0] == 400
        assert post(fake, chat("x" * 11, stream=True))[2] == ""
        connection = connect(fake)
        connection.request("GET", "/v1/models")
        listed = json.loads(connection.getresponse().read())["data"]
        connection.close()
    assert listed[0]["id"] == "m" and listed[0]["context_length"] == 512
