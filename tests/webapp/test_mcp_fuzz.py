"""Fuzzing ``/mcp`` with hostile JSON-RPC, sent as raw bytes to the app served over HTTP with a
real worker running the tools a call names (web_search on a loopback SearXNG, web_fetch).

No answer may be a 5xx, a hang or a traceback. A message that is not one JSON-RPC 2.0 message
is a 4xx carrying a JSON-RPC error; a request is answered with its own id, a result or a
JSON-RPC error whose message is a sentence (a method's fault, as JSON-RPC over HTTP sends it,
with 200); a notification or a client's answer gets 202 and nothing. A tool called with
arguments its schema refuses answers a result with ``isError`` set, saying what was wrong.
Messages are drawn by hypothesis (derandomized) and made by hand: batches, ids of every type,
unknown methods, params of the wrong type, deep nesting, lone surrogates, NUL bytes, duplicate
keys, wrong content types and bad tokens.

``FUZZ_EXAMPLES`` sets the examples per drawn test (default 40). The server, its worker and
the connections they make stay on loopback (tests/support/loopback.py).
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR

from tests.support import fuzzing
from tests.support.chat import ChatClient
from tests.support.chat_page import token_for
from tests.support.fuzzing import encoded, nested
from tests.support.processes import HANG_SECONDS
from tests.support.sites import Site
from tools.charset import loads_json

pytestmark = [pytest.mark.integration, pytest.mark.timeout(fuzzing.TIMEOUT_SECONDS)]
NOT_SENT = object()


@pytest.fixture(scope="module")
def server(tmp_path_factory, redis_url, sqlite_template):
    """The app over HTTP with a worker, web_search on a loopback SearXNG; yields a session
    holding a user's chat token, with ``url`` set on it."""
    directory = tmp_path_factory.mktemp("mcp-fuzz")
    with fuzzing.fuzzed_app(directory, redis_url, sqlite_template, "mcp") as app, Site() as site:
        found = {"results": [{"title": "A", "url": "https://a.example/", "content": "A"}]}
        site.serve("/search", "application/json", json.dumps(found).encode())
        with fuzzing.guarded_server(app, tmp_path_factory.mktemp("mcp-server")) as session:
            admin = ChatClient(session.url, token_for(app, admin=True)[1])
            admin.search_with_searxng(site.url(""))
            yield session


def send(session: requests.Session, body: bytes, content_type: str | None = "application/json"):
    """POST raw bytes to /mcp and read the whole answer (an event stream to its end)."""
    return fuzzing.send_raw(session, "/mcp", body, content_type, HANG_SECONDS)


def answer_of(response: requests.Response) -> Any:
    """Return the JSON-RPC message of an answer: its JSON, or its event stream's one message."""
    if response.headers.get("Content-Type", "").startswith("text/event-stream"):
        data = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
        assert len(data) == 1, response.text
        return fuzzing.strict_json(data[0])
    return fuzzing.strict_json(response.text)


def is_id(value: Any) -> bool:
    """Return whether ``value`` is an id a request may carry: a string or a finite number."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int) and not isinstance(value, bool)


def check_answer(response: requests.Response, sent_id: Any = NOT_SENT) -> dict[str, Any] | None:
    """Assert the answer is 202 and empty, or one JSON-RPC answer (an error for any 4xx) with
    the request's id when it had a valid one; return the answer's JSON-RPC message."""
    text = response.text
    fuzzing.assert_no_server_error(response)
    if response.status_code == 202:
        assert text == "", text
        return None
    answer = answer_of(response)
    assert isinstance(answer, dict) and answer.get("jsonrpc") == "2.0", text
    assert set(answer) in ({"jsonrpc", "id", "result"}, {"jsonrpc", "id", "error"}), text
    assert answer["id"] is None or is_id(answer["id"]), text
    if sent_id is not NOT_SENT and is_id(sent_id):
        # A message refused as a whole may not say whose it was (JSON-RPC's null id).
        assert answer["id"] == sent_id or (response.status_code >= 400 and answer["id"] is None)
    if "error" in answer:
        error = answer["error"]
        assert set(error) <= {"code", "message", "data"}, text
        assert isinstance(error["code"], int) and not isinstance(error["code"], bool), text
        assert isinstance(error["message"], str) and error["message"].endswith("."), text
    else:
        assert response.status_code == 200, text
        assert isinstance(answer["result"], dict), text
    return answer


KEYS = ["jsonrpc", "id", "method", "params", "name", "arguments", "query", "url"]
hostile = fuzzing.hostile_json(KEYS, ["2.0", "web_search", "web_fetch"])
METHODS = ["initialize", "ping", "tools/list", "tools/call", "notifications/initialized"]
ids = st.one_of(hostile, st.integers(), st.text(max_size=10))
arguments = st.one_of(
    hostile,
    st.fixed_dictionaries(
        {},
        optional={
            "query": hostile,
            "url": st.one_of(hostile, st.sampled_from(["http://127.0.0.1:9/", "ftp://x"])),
            "max_results": hostile,
            "x": hostile,
        },
    ),
)
params = st.one_of(
    hostile,
    st.fixed_dictionaries(
        {},
        optional={
            "name": st.one_of(st.sampled_from(["web_search", "web_fetch", "nope"]), hostile),
            "arguments": arguments,
            "protocolVersion": st.one_of(st.sampled_from(["2025-06-18"]), hostile),
            "_meta": hostile,
        },
    ),
)
messages = st.fixed_dictionaries(
    {"jsonrpc": st.one_of(st.just("2.0"), hostile)},
    optional={
        "id": ids,
        "method": st.one_of(st.sampled_from(METHODS), hostile),
        "params": params,
        "result": hostile,
        "error": hostile,
    },
)


@fuzzing.FUZZ
@given(message=messages)
def run_hostile_message(server, message):
    body = encoded(message)
    check_answer(send(server, body), loads_json(body).get("id", NOT_SENT))  # as it is read


def test_a_hostile_json_rpc_message_is_answered_in_json_rpc(server):
    run_hostile_message(server)


def test_a_body_of_any_json_or_bytes_is_answered_in_json_rpc(server):
    fuzzing.fuzz_bodies(lambda body: check_answer(send(server, body)), hostile)


@fuzzing.FUZZ
@given(
    name=st.sampled_from(["web_search", "web_fetch"]), arguments=arguments, id=st.integers(0, 99)
)
def run_tool_call(server, name, arguments, id):
    message = {"jsonrpc": "2.0", "id": id, "method": "tools/call"}
    message["params"] = {"name": name, "arguments": arguments}
    answer = check_answer(send(server, encoded(message)), id)
    if arguments is None or isinstance(arguments, dict):
        assert answer is not None and "result" in answer, answer
    else:
        assert answer is not None and answer["error"]["code"] == INVALID_PARAMS, answer


def test_a_tool_called_with_any_arguments_answers_a_result(server):
    run_tool_call(server)


def rpc(method: str, params: Any = NOT_SENT, id: Any = 1) -> dict[str, Any]:
    """Return a JSON-RPC request."""
    message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not NOT_SENT:
        message["params"] = params
    return message


HANDMADE = {
    "empty": b"",
    "not json": b"hello",
    "truncated": b'{"jsonrpc": "2.0", "id": 1, "method": "ping"',
    "null": b"null",
    "a number": b"1",
    "deep lists": nested(10_000),
    "deep params": b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": '
    + b'{"a":' * 10_000
    + b"1"
    + b"}" * 10_001,
    "nesting that parses": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
    b'{"name": "web_search", "arguments": {"query": ' + nested(900) + b"}}}",
    "batch": encoded([rpc("ping"), rpc("ping", id=2)]),
    "empty batch": b"[]",
    "huge batch": encoded([rpc("ping", id=n) for n in range(20_000)]),
    "no jsonrpc": encoded({"id": 1, "method": "ping"}),
    "jsonrpc 1.0": encoded({"jsonrpc": "1.0", "id": 1, "method": "ping"}),
    "jsonrpc as a number": encoded({"jsonrpc": 2.0, "id": 1, "method": "ping"}),
    "nothing but jsonrpc": encoded({"jsonrpc": "2.0"}),
    "id without method": encoded({"jsonrpc": "2.0", "id": 1}),
    "id null": encoded(rpc("ping", id=None)),
    "id true": encoded(rpc("ping", id=True)),
    "id a list": encoded(rpc("ping", id=[1])),
    "id an object": encoded(rpc("ping", id={"a": 1})),
    "id a float": encoded(rpc("ping", id=1.5)),
    "id NaN": b'{"jsonrpc": "2.0", "id": NaN, "method": "ping"}',
    "id Infinity": b'{"jsonrpc": "2.0", "id": -Infinity, "method": "ping"}',
    "id huge": encoded(rpc("ping", id=2**80)),
    "id a long text": encoded(rpc("ping", id="i" * 100_000)),
    "id with a NUL": encoded(rpc("ping", id="a\x00b")),
    "method a number": encoded(rpc(5)),
    "method null": encoded(rpc(None)),
    "method unknown": encoded(rpc("resources/list")),
    "method empty": encoded(rpc("")),
    "method huge": encoded(rpc("m" * 100_000)),
    "method with a NUL": encoded(rpc("ping\x00")),
    "method a lone surrogate": b'{"jsonrpc": "2.0", "id": 1, "method": "\\udc00"}',
    "params a list": encoded(rpc("ping", [1])),
    "params a string": encoded(rpc("ping", "x")),
    "params a number": encoded(rpc("tools/list", 0)),
    "params false": encoded(rpc("tools/list", False)),
    "params null": encoded(rpc("ping", None)),
    "initialize version a list": encoded(rpc("initialize", {"protocolVersion": ["2025-06-18"]})),
    "initialize version an object": encoded(rpc("initialize", {"protocolVersion": {}})),
    "tools/call without params": encoded(rpc("tools/call")),
    "tools/call name a number": encoded(rpc("tools/call", {"name": 1})),
    "tools/call name unknown": encoded(rpc("tools/call", {"name": "nope"})),
    "tools/call arguments a string": encoded(
        rpc("tools/call", {"name": "web_search", "arguments": "lighthouses"})
    ),
    "tools/call arguments a list": encoded(
        rpc("tools/call", {"name": "web_search", "arguments": ["lighthouses"]})
    ),
    "tools/call arguments false": encoded(
        rpc("tools/call", {"name": "web_search", "arguments": False})
    ),
    "tools/call query a number": encoded(
        rpc("tools/call", {"name": "web_search", "arguments": {"query": 5}})
    ),
    "tools/call query huge": encoded(
        rpc("tools/call", {"name": "web_search", "arguments": {"query": "q" * 500_000}})
    ),
    "tools/call query a NUL": encoded(
        rpc("tools/call", {"name": "web_search", "arguments": {"query": "\x00"}})
    ),
    "tools/call url a list": encoded(
        rpc("tools/call", {"name": "web_fetch", "arguments": {"url": ["http://127.0.0.1:9/"]}})
    ),
    "tools/call url not a url": encoded(
        rpc("tools/call", {"name": "web_fetch", "arguments": {"url": "not a url"}})
    ),
    "notification": encoded({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    "notification unknown": encoded({"jsonrpc": "2.0", "method": "nope", "params": 5}),
    "notification method a number": encoded({"jsonrpc": "2.0", "method": 5}),
    "notification cancelled": encoded(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    ),
    "a client's result": encoded({"jsonrpc": "2.0", "id": 1, "result": {}}),
    "a client's error": encoded({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "x"}}),
    "duplicate keys": b'{"jsonrpc": "2.0", "id": 1, "id": [], "method": "ping"}',
    "duplicate methods": b'{"jsonrpc": "2.0", "id": 1, "method": 5, "method": "ping"}',
    "lone surrogate id": b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}',
    "invalid utf-8": b'{"jsonrpc": "2.0", "id": "\xff", "method": "ping"}',
    "utf-16": encoded(rpc("ping")).decode().encode("utf-16"),
    "bom": b"\xef\xbb\xbf" + encoded(rpc("ping")),
    "too large": encoded(rpc("ping", {"x": "a" * 3_000_000})),
}


@pytest.mark.parametrize("body", HANDMADE.values(), ids=HANDMADE.keys())
def test_a_hand_made_hostile_message_is_answered_in_json_rpc(server, body):
    try:
        sent_id = loads_json(body).get("id", NOT_SENT)  # as the server reads it
    except (ValueError, AttributeError, RecursionError):
        sent_id = NOT_SENT
    check_answer(send(server, body), sent_id)


@pytest.mark.parametrize("content_type", fuzzing.CONTENT_TYPES)
def test_a_body_of_another_content_type_is_answered_in_json_rpc(server, content_type):
    check_answer(send(server, encoded(rpc("ping")), content_type), 1)


@pytest.mark.parametrize("authorization", fuzzing.AUTHORIZATIONS)
def test_a_missing_or_bad_token_is_a_401_in_json_rpc(server, authorization):
    headers = {"Content-Type": "application/json"}
    if authorization is not None:
        headers["Authorization"] = authorization
    response = requests.post(
        f"{server.url}/mcp", data=encoded(rpc("ping")), headers=headers, timeout=HANG_SECONDS
    )
    assert response.status_code == 401, response.text
    assert response.json()["error"]["message"].endswith("configuration."), response.text


def post(client, headers, body: bytes, content_type: str = "application/json"):
    """POST raw bytes to /mcp with the test client."""
    return client.post("/mcp", data=body, headers={**headers, "Content-Type": content_type})


def test_nesting_deeper_than_the_stack_is_a_parse_error(client, make_user, bearer):
    """Fuzzing found 10,000 nested lists failing the request with a 500 (a RecursionError
    from the JSON parser, which /mcp's silent read did not catch)."""
    answered = post(client, bearer(make_user("ivy")), b"[" * 10_000 + b"]" * 10_000)

    assert (answered.status_code, answered.json["error"]["code"]) == (400, PARSE_ERROR)


@pytest.mark.parametrize("id", [None, True, [1], {"a": 1}, float("nan"), float("-inf")])
def test_an_id_that_is_not_a_string_or_a_number_is_refused(client, make_user, bearer, id):
    """Fuzzing found any JSON accepted as an id and echoed in the answer (a list, an object,
    true), null answered as a request, and NaN (which Python's parser reads) echoed as NaN,
    which is not JSON: MCP's ids are strings or numbers."""
    answered = post(client, bearer(make_user("ivy")), encoded(rpc("ping", id=id)))

    assert answered.status_code == 400
    assert answered.json["id"] is None and answered.json["error"]["code"] == INVALID_REQUEST
    assert "must be a string or a number" in answered.json["error"]["message"]


def test_a_message_with_no_method_and_no_answer_is_refused_not_accepted(client, make_user, bearer):
    """Fuzzing found {"jsonrpc": "2.0"} and {"jsonrpc": "2.0", "id": 1} accepted with 202 as
    if they were a notification or an answer of the client's."""
    headers = bearer(make_user("ivy"))
    empty = post(client, headers, encoded({"jsonrpc": "2.0"}))
    id_only = post(client, headers, encoded({"jsonrpc": "2.0", "id": 1}))
    answer = post(client, headers, encoded({"jsonrpc": "2.0", "id": 1, "result": {}}))

    assert (empty.status_code, empty.json["error"]["code"]) == (400, INVALID_REQUEST)
    assert (id_only.status_code, id_only.json["id"]) == (400, 1)
    assert answer.status_code == 202


def test_params_that_are_not_an_object_are_a_400_with_the_requests_id(client, make_user, bearer):
    """Fuzzing found params of 0, false or "" read as no params, and other params that were
    not an object refused with 200, unlike every other message refused."""
    headers = bearer(make_user("ivy"))
    for params in (0, False, "", "x", [1]):
        answered = post(client, headers, encoded(rpc("tools/list", params, id=7)))

        assert answered.status_code == 400, params
        assert answered.json["id"] == 7 and answered.json["error"]["code"] == INVALID_REQUEST
        assert "params must be an object" in answered.json["error"]["message"]


def test_a_body_not_sent_as_json_is_a_415_naming_the_content_type(client, make_user, bearer):
    """Fuzzing found a JSON-RPC message sent as text/plain refused as JSON that does not
    parse, which it was not."""
    answered = post(client, bearer(make_user("ivy")), encoded(rpc("ping")), "text/plain")

    assert answered.status_code == 415
    assert "Content-Type: application/json" in answered.json["error"]["message"]


def test_arguments_that_are_not_an_object_are_invalid_params(client, make_user, bearer):
    """Fuzzing found arguments of a string or a list sent to a worker (holding one of the
    user's MCP calls) only to fail there: they are MCP's invalid params, said at once."""
    headers = bearer(make_user("ivy"))
    for arguments in ("lighthouses", ["lighthouses"], 5):
        message = rpc("tools/call", {"name": "web_search", "arguments": arguments})
        answered = post(client, headers, encoded(message))

        assert answered.status_code == 200 and answered.json["id"] == 1
        assert answered.json["error"]["code"] == INVALID_PARAMS
        assert "params.arguments as an object" in answered.json["error"]["message"]
