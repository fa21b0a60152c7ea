"""Fuzzing ``/v1/`` with hostile bodies, headers and tokens, sent as raw bytes to the app served
over HTTP with a real worker and the fake model.

No answer may be a 5xx, a hang or a traceback: a request refused gets a 4xx in OpenAI's shape
(``{"error": {"message", "type", "param", "code"}}``) whose message is a sentence; one that is
valid (unknown fields and sampling settings are ignored) gets its completion, whole or streamed.
Bodies are drawn by hypothesis (derandomized) from a valid request with one field anywhere
replaced by hostile JSON, and from a list of hand-made ones: not JSON, deep nesting, lone
surrogates, NUL bytes, duplicate keys, huge strings, wrong content types and bad tokens.

``FUZZ_EXAMPLES`` sets the examples per drawn test (default 40, under a minute on two busy
cores). The server, its worker and the connections they make stay on loopback
(tests/support/loopback.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st

from core.extensions import db
from core.models import Conversation, Provider
from tests.support import fuzzing
from tests.support.fake_model import FakeModel
from tests.support.fuzzing import encoded, nested
from tests.support.models import add_fake_provider
from tests.support.processes import HANG_SECONDS

pytestmark = [pytest.mark.integration, pytest.mark.timeout(fuzzing.TIMEOUT_SECONDS)]
MODEL = "fake/m"
ERROR_KEYS = {"message", "type", "param", "code"}


@pytest.fixture(scope="module")
def fuzz_app(tmp_path_factory, redis_url, sqlite_template):
    """An app with the built-in plugins and the fake model as ``fake/m``."""
    with FakeModel() as model:
        directory = tmp_path_factory.mktemp("v1-fuzz")
        with fuzzing.fuzzed_app(
            directory, redis_url, sqlite_template, "v1", TURN_MAX_STEPS=2
        ) as app:
            add_fake_provider(app, model.base_url)
            yield app


@pytest.fixture(scope="module")
def server(fuzz_app, tmp_path_factory):
    """The app over HTTP with a worker; a session holding a user's chat token (``url`` set)."""
    with fuzzing.guarded_server(fuzz_app, tmp_path_factory.mktemp("v1-server")) as session:
        yield session


def send(session: requests.Session, body: bytes, content_type: str | None = "application/json"):
    """POST raw bytes to /v1/chat/completions and read the whole answer (a stream to its end)."""
    return fuzzing.send_raw(session, "/v1/chat/completions", body, content_type, HANG_SECONDS)


def check_answer(response: requests.Response) -> None:
    """Assert the answer is a completion (whole or streamed) or a 4xx in OpenAI's shape."""
    text = response.text
    fuzzing.assert_no_server_error(response)
    if response.status_code == 200:
        if response.headers["Content-Type"].startswith("text/event-stream"):
            assert text.endswith("data: [DONE]\n\n"), text[-2000:]
            for line in text.splitlines()[:-2]:
                if line.startswith("data: "):
                    fuzzing.strict_json(line[6:])
        else:
            assert fuzzing.strict_json(text)["object"] == "chat.completion", text
        return
    assert 400 <= response.status_code < 500
    check_error_shape(fuzzing.strict_json(text), text)


def check_error_shape(body: Any, text: str) -> None:
    """Assert ``body`` is OpenAI's error: a sentence, a type, and a param and code or null."""
    assert isinstance(body, dict) and set(body) == {"error"}, text
    error = body["error"]
    assert set(error) == ERROR_KEYS, text
    assert isinstance(error["message"], str) and error["message"].endswith((".", ")")), text
    assert isinstance(error["type"], str), text
    assert error["param"] is None or isinstance(error["param"], str), text
    assert error["code"] is None or isinstance(error["code"], str), text


def valid_body(**changes: Any) -> dict[str, Any]:
    """Return a request that starts a turn, with ``changes``."""
    return {"model": MODEL, "messages": [{"role": "user", "content": "Hello?"}], **changes}


hostile = fuzzing.hostile_json(
    ["role", "content", "type", "text", "tools", "x"], ["fake/m", "user", "text"]
)


# Where in a valid request a hostile value goes.
PLACES = [
    ("model",),
    ("messages",),
    ("messages", 0),
    ("messages", 0, "role"),
    ("messages", 0, "content"),
    ("messages", 0, "content", 0),
    ("messages", 0, "content", 0, "type"),
    ("messages", 0, "content", 0, "text"),
    ("messages", 0, "tool_calls"),
    ("messages", 0, "name"),
    ("stream",),
    ("stream_options",),
    ("stream_options", "include_usage"),
    ("n",),
    ("temperature",),
    ("max_tokens",),
    ("tools",),
    ("tool_choice",),
    ("functions",),
    ("lookout",),
    ("lookout", "tools"),
    ("unknown_field",),
]


def replaced(place: tuple, value: Any) -> dict[str, Any]:
    """Return a valid request (content as a list of parts) with ``value`` at ``place``."""
    body = valid_body(
        messages=[{"role": "user", "content": [{"type": "text", "text": "Hello?"}]}],
        stream_options={"include_usage": True},
        lookout={"tools": []},
    )
    holder: Any = body
    for key in place[:-1]:
        holder = holder[key]
    holder[place[-1]] = value
    return body


@fuzzing.FUZZ
@given(place=st.sampled_from(PLACES), value=hostile)
def run_hostile_field(server, place, value):
    check_answer(send(server, encoded(replaced(place, value))))


def test_a_hostile_value_in_any_field_is_answered_or_refused_in_openais_shape(server):
    run_hostile_field(server)


def test_a_body_of_any_json_or_bytes_is_refused_in_openais_shape(server):
    fuzzing.fuzz_bodies(lambda body: check_answer(send(server, body)), hostile)


HANDMADE = {
    "empty": b"",
    "spaces": b"  \n ",
    "not json": b"hello",
    "truncated": b'{"model": "fake/m", "messages": [',
    "a list": b"[]",
    "a string": b'"hello"',
    "null": b"null",
    "nan": b'{"model": "fake/m", "messages": NaN}',
    "nan model": b'{"model": NaN, "messages": [{"role": "user", "content": "a"}]}',
    "infinite n": b'{"model": "fake/m", "n": Infinity, "messages": '
    b'[{"role": "user", "content": "a"}]}',
    "nan temperature": b'{"model": "fake/m", "temperature": NaN, "messages": '
    b'[{"role": "user", "content": "a"}]}',
    "deep lists": nested(10_000),
    "deep in messages": b'{"model": "fake/m", "messages": ' + nested(10_000) + b"}",
    "deep objects": b'{"a":' * 10_000 + b"1" + b"}" * 10_000,
    "lone surrogate": b'{"model": "fake/m", "messages": [{"role": "user", "content": "\\ud800"}]}',
    "lone surrogate model": b'{"model": "\\udfff", "messages": [{"role": "user", "content": "a"}]}',
    "nul in content": encoded(valid_body(messages=[{"role": "user", "content": "a\x00b"}])),
    "nul in model": encoded(valid_body(model="fake/m\x00")),
    "invalid utf-8": b'{"model": "fake/m", "messages": [{"role": "user", "content": "\xff\xfe"}]}',
    "utf-16": json.dumps(valid_body()).encode("utf-16"),
    "bom": b"\xef\xbb\xbf" + encoded(valid_body()),
    "duplicate keys": b'{"model": "fake/m", "model": 5, "messages": []}',
    "duplicate messages": b'{"model": "fake/m", "messages": 1, "messages": [{"role": "user", '
    b'"content": "a"}]}',
    "empty messages": encoded(valid_body(messages=[])),
    "messages as a string": encoded(valid_body(messages="Hello?")),
    "messages as an object": encoded(valid_body(messages={"role": "user", "content": "a"})),
    "content as a number": encoded(valid_body(messages=[{"role": "user", "content": 5}])),
    "content as an object": encoded(valid_body(messages=[{"role": "user", "content": {}}])),
    "image part": encoded(
        valid_body(
            messages=[
                {
                    "role": "user",
                    "content": [{"type": "image_url", "image_url": {"url": "http://x/a.png"}}],
                }
            ]
        )
    ),
    "unknown part": encoded(valid_body(messages=[{"role": "user", "content": [{"type": "x"}]}])),
    "unknown role": encoded(valid_body(messages=[{"role": "wizard", "content": "a"}])),
    "role as a number": encoded(valid_body(messages=[{"role": 1, "content": "a"}])),
    "no role": encoded(valid_body(messages=[{"content": "a"}])),
    "message as a string": encoded(valid_body(messages=["Hello?"])),
    "message as null": encoded(valid_body(messages=[None])),
    "tool_calls as a string": encoded(
        valid_body(messages=[{"role": "user", "content": "a", "tool_calls": "x"}])
    ),
    "tool_calls malformed": encoded(
        valid_body(
            messages=[
                {"role": "user", "content": "a"},
                {"role": "assistant", "content": None, "tool_calls": [{"id": 1}]},
                {"role": "user", "content": "b"},
            ]
        )
    ),
    "tool message": encoded(
        valid_body(messages=[{"role": "tool", "content": "a", "tool_call_id": "x"}])
    ),
    "only a system message": encoded(valid_body(messages=[{"role": "system", "content": "a"}])),
    "last is the assistant's": encoded(
        valid_body(messages=[{"role": "assistant", "content": "a"}])
    ),
    "empty question": encoded(valid_body(messages=[{"role": "user", "content": ""}])),
    "huge question": encoded(valid_body(messages=[{"role": "user", "content": "a" * 300_000}])),
    "many messages": encoded(valid_body(messages=[{"role": "user", "content": "a"}] * 501)),
    "n of 2": encoded(valid_body(n=2)),
    "n as a string": encoded(valid_body(n="1")),
    "n huge": encoded(valid_body(n=10**30)),
    "n as a float": encoded(valid_body(n=1.5)),
    "temperature as a string": encoded(valid_body(temperature="hot")),
    "temperature out of range": encoded(valid_body(temperature=1e308)),
    "max_tokens negative": encoded(valid_body(max_tokens=-1)),
    "max_tokens as a list": encoded(valid_body(max_tokens=[1])),
    "stream as a string": encoded(valid_body(stream="yes")),
    "stream as a number": encoded(valid_body(stream=2)),
    "stream_options as a string": encoded(valid_body(stream=True, stream_options="x")),
    "include_usage as a list": encoded(
        valid_body(stream=True, stream_options={"include_usage": []})
    ),
    "tools as a string": encoded(valid_body(tools="web_search")),
    "tools malformed": encoded(valid_body(tools=[{"type": "function"}])),
    "tool_choice as an object": encoded(valid_body(tool_choice={"type": "function"})),
    "tool_choice as a number": encoded(valid_body(tool_choice=1)),
    "lookout as a list": encoded(valid_body(lookout=[])),
    "lookout tools as a string": encoded(valid_body(lookout={"tools": "web_search"})),
    "lookout tools unknown": encoded(valid_body(lookout={"tools": ["nope", 1]})),
    "lookout unknown field": encoded(valid_body(lookout={"x": 1})),
    "model as a number": encoded(valid_body(model=5)),
    "model as null": encoded(valid_body(model=None)),
    "model empty": encoded(valid_body(model="")),
    "model unknown": encoded(valid_body(model="nope/nope")),
    "model without a provider": encoded(valid_body(model="m")),
    "model huge": encoded(valid_body(model="a" * 100_000)),
    "no model": encoded({"messages": [{"role": "user", "content": "a"}]}),
    "many tool names": encoded(valid_body(lookout={"tools": ["web_search"] * 80_000})),
    "many unknown tool names": encoded(
        valid_body(lookout={"tools": [str(n) for n in range(80_000)]})
    ),
    "many parts": encoded(
        valid_body(messages=[{"role": "user", "content": [{"type": "text", "text": "a"}] * 40_000}])
    ),
    "many fields": encoded(valid_body(**{f"f{n}": n for n in range(60_000)})),
    "many messages near the limit": encoded(
        valid_body(messages=[{"role": "user", "content": "a" * 1_900}] * 500)
    ),
    "too large": encoded(valid_body(messages=[{"role": "user", "content": "a" * 3_000_000}])),
}


@pytest.mark.parametrize("body", HANDMADE.values(), ids=HANDMADE.keys())
def test_a_hand_made_hostile_body_is_refused_in_openais_shape(server, body):
    check_answer(send(server, body))


@pytest.mark.parametrize("content_type", fuzzing.CONTENT_TYPES)
def test_a_body_of_another_content_type_is_refused_in_openais_shape(server, content_type):
    check_answer(send(server, encoded(valid_body()), content_type))


@pytest.mark.parametrize("authorization", fuzzing.AUTHORIZATIONS)
@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/models"])
def test_a_missing_or_bad_token_is_a_401_in_openais_shape(server, path, authorization):
    headers = {"Content-Type": "application/json"}
    if authorization is not None:
        headers["Authorization"] = authorization
    response = requests.request(
        "POST" if path.endswith("completions") else "GET",
        f"{server.url}{path}",
        data=encoded(valid_body()),
        headers=headers,
        timeout=HANG_SECONDS,
    )
    assert response.status_code == 401, response.text
    check_error_shape(response.json(), response.text)


ROUTES = [
    ("GET", "/v1/chat/completions", 405),
    ("PUT", "/v1/chat/completions", 405),
    ("POST", "/v1/models", 405),
    ("DELETE", "/v1/models", 405),
    ("POST", "/v1/embeddings", 404),
    ("GET", "/v1/", 404),
    ("POST", "/v1/chat/completions/x", 404),
    ("GET", "/v1/models/fake%2Fm", 404),
]


@pytest.mark.parametrize(("method", "path", "status"), ROUTES)
def test_a_route_or_method_it_does_not_serve_is_refused_in_openais_shape(
    server, method, path, status
):
    response = server.request(
        method, f"{server.url}{path}", data=encoded(valid_body()), timeout=HANG_SECONDS
    )
    assert response.status_code == status, response.text
    check_error_shape(response.json(), response.text)


def test_nothing_stored_is_lost_while_refusing(server, fuzz_app):
    """A refusal stores no conversation, and a valid request after the fuzzing still runs."""
    with fuzz_app.app_context():
        before = db.session.scalar(db.select(db.func.count()).select_from(Conversation))
    refused = send(server, encoded(valid_body(messages=[{"role": "user", "content": 5}])))
    answered = send(server, encoded(valid_body()))
    with fuzz_app.app_context():
        after = db.session.scalar(db.select(db.func.count()).select_from(Conversation))
    assert refused.status_code == 400 and answered.status_code == 200, answered.text
    assert after == before + 1


def test_a_post_without_a_token_is_a_401_as_openais_clients_expect(server):
    """Fuzzing found a POST with no bearer token answered 400 with the page's CSRF refusal (an
    OpenAI client raised BadRequestError for a missing key); GET /v1/models said 401."""
    refused = requests.post(
        f"{server.url}/v1/chat/completions", json=valid_body(), timeout=HANG_SECONDS
    )

    assert refused.status_code == 401
    assert refused.json()["error"]["type"] == "authentication_error"
    assert "Authorization: Bearer <token>" in refused.json()["error"]["message"]


@pytest.mark.parametrize(
    ("body", "param", "example"),
    [
        (valid_body(messages=["Hello?"]), "messages.0", '{"role": "user", "content": "Hello"}'),
        (valid_body(stream_options=[True]), "stream_options", '{"include_usage": true}'),
        (valid_body(lookout="web_search"), "lookout", '{"tools": ["web_search"]}'),
    ],
)
def test_a_field_that_is_not_an_object_is_named_with_an_example(server, body, param, example):
    """Fuzzing found marshmallow's "Invalid input type." sent as the message, with the param
    ``messages.0._schema``: neither named the field as the client sent it nor what to send."""
    refused = send(server, encoded(body))

    assert refused.status_code == 400
    assert refused.json()["error"]["param"] == param
    assert example in refused.json()["error"]["message"]


def test_an_answers_message_sent_back_with_its_null_fields_is_read(server):
    """Fuzzing found ``tool_calls: null`` and ``name: null`` refused ("cannot be empty"), as
    the OpenAI SDK's ``message.model_dump()`` of an answer sends them back in the history."""
    history = [
        {"role": "user", "content": "Hello?"},
        {"role": "assistant", "content": "Hi.", "tool_calls": None, "name": None, "refusal": None},
        {"role": "user", "content": "And now?", "name": None},
    ]

    answered = send(server, encoded(valid_body(messages=history)))

    assert answered.status_code == 200, answered.text
    assert answered.json()["choices"][0]["message"]["content"] == "Hello from the fake model."


def conversations(app) -> int:
    """Return how many conversations are stored."""
    with app.app_context():
        return db.session.scalar(db.select(db.func.count()).select_from(Conversation))


def test_a_tool_name_no_plugin_has_is_a_400_before_any_turn(server, fuzz_app):
    """Fuzzing found lookout.tools naming a tool nobody installed (["nope"]) answered 502
    server_error once the started turn failed, leaving a failed conversation behind."""
    before = conversations(fuzz_app)

    refused = send(server, encoded(valid_body(lookout={"tools": ["web_fetch", "nope"]})))

    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["code"] == "tool_not_found"
    assert refused.json()["error"]["param"] == "lookout.tools"
    assert refused.json()["error"]["message"].startswith("The tool nope is not available.")
    assert conversations(fuzz_app) == before


def test_tools_named_for_a_model_without_tools_are_a_400_before_any_turn(server, fuzz_app):
    """As above, for a model that cannot use tools: its turn failed with a 502."""
    with fuzz_app.app_context():
        base_url = db.session.scalar(db.select(Provider.base_url).filter_by(name="fake"))
        db.session.add(Provider(name="plain", base_url=base_url, models=[{"name": "m"}]))
        db.session.commit()
    before = conversations(fuzz_app)

    body = valid_body(model="plain/m", lookout={"tools": ["web_fetch"]})
    refused = send(server, encoded(body))
    answered = send(server, encoded(valid_body(model="plain/m", lookout={"tools": []})))

    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["code"] == "tools_not_supported"
    assert "cannot use tools" in refused.json()["error"]["message"]
    assert answered.status_code == 200, answered.text
    assert conversations(fuzz_app) == before + 1
