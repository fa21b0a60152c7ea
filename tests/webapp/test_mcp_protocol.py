"""/mcp's JSON-RPC without a worker: the handshake, ping, the methods it does not answer, and
what it says to messages, tokens and methods of HTTP it does not take."""

from __future__ import annotations

from datetime import timedelta

import pytest
from mcp_types import INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from core.extensions import db
from core.limits import set_overrides
from core.models import ApiToken, User
from core.models.base import utcnow
from core.quotas import QuotaExceeded, end_mcp_call, running_mcp_calls, start_mcp_call
from webapp.auth.scopes import EXPIRED, describe_expiry


def rpc(client, headers, method: str, params: dict | None = None, id: int = 1):
    """POST one JSON-RPC request to /mcp and return the response."""
    message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return client.post("/mcp", json=message, headers=headers)


def test_the_handshake_answers_the_clients_version_or_the_newest_it_speaks(
    client, make_user, bearer
):
    headers = bearer(make_user("ivy"))

    known = rpc(client, headers, "initialize", {"protocolVersion": "2025-06-18"})
    unknown = rpc(client, headers, "initialize", {"protocolVersion": "1999-01-01"})

    assert known.status_code == 200
    assert known.json["result"]["protocolVersion"] == "2025-06-18"
    assert known.json["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert "Mcp-Session-Id" not in known.headers
    assert unknown.json["result"]["protocolVersion"] == LATEST_HANDSHAKE_VERSION
    assert rpc(client, headers, "ping").json == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_a_method_it_does_not_answer_is_a_json_rpc_error_naming_those_it_does(
    client, make_user, bearer
):
    answered = rpc(client, bearer(make_user("ivy")), "server/discover", {})

    assert answered.json["error"]["code"] == METHOD_NOT_FOUND
    assert "initialize, ping, tools/list and tools/call" in answered.json["error"]["message"]


def test_a_notification_is_accepted_without_an_answer(client, make_user, bearer):
    sent = client.post(
        "/mcp",
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers=bearer(make_user("ivy")),
    )

    assert sent.status_code == 202
    assert sent.get_data() == b""


def test_a_body_that_is_not_one_json_rpc_message_is_refused_with_400(client, make_user, bearer):
    headers = bearer(make_user("ivy"))

    garbled = client.post("/mcp", data="{", headers={**headers, "Content-Type": "application/json"})
    batch = client.post(
        "/mcp", json=[{"jsonrpc": "2.0", "id": 1, "method": "ping"}], headers=headers
    )

    assert (garbled.status_code, garbled.json["error"]["code"]) == (400, PARSE_ERROR)
    assert (batch.status_code, batch.json["error"]["code"]) == (400, INVALID_REQUEST)
    assert "batches are not accepted" in batch.json["error"]["message"]


def test_an_expired_token_is_refused_with_401_saying_when_it_expired(app, client, make_user):
    user = make_user("ivy")
    with app.app_context():
        row, token = ApiToken.make(
            db.session.get(User, user.id), "old", expires_at=utcnow() - timedelta(days=1)
        )
        db.session.add(row)
        db.session.commit()
        expired = EXPIRED.format(when=describe_expiry(row.expires_at))

    refused = rpc(client, {"Authorization": f"Bearer {token}"}, "ping")

    assert refused.status_code == 401
    assert refused.json["error"]["message"] == expired


def test_a_get_stream_is_answered_405_naming_post(client, make_user, bearer):
    answered = client.get("/mcp", headers=bearer(make_user("ivy")))

    assert answered.status_code == 405
    assert answered.headers["Allow"] == "POST"
    assert "answers POST only" in answered.json["error"]["message"]


def test_mcp_calls_past_the_limit_are_refused_and_a_dead_calls_place_frees_at_its_end(
    app, make_user
):
    """A running call is counted until it ends or its deadline passes, so a process that died
    mid-call cannot hold a user's place for ever."""
    user = make_user("alice")
    with app.app_context():
        set_overrides(user.id, {"mcpCalls": 1})
        db.session.commit()
        start_mcp_call(user.id, "mcp-running", 600)
        with pytest.raises(QuotaExceeded) as refused:
            start_mcp_call(user.id, "mcp-next", 600)
        assert refused.value.limit == "mcpCalls"
        end_mcp_call(user.id, "mcp-running")
        assert running_mcp_calls(user.id) == 0
        start_mcp_call(user.id, "mcp-died", -1)  # its deadline has passed: its process died
        start_mcp_call(user.id, "mcp-next", 600)
        assert running_mcp_calls(user.id) == 1


def test_half_a_pair_in_a_message_is_read_as_a_replacement_character(client, make_user, bearer):
    """A lone surrogate ("\\ud83d", half an emoji a client cut) is read as U+FFFD, as every
    JSON body is (webapp.api.bodies.BodyJSON): the answer is JSON-RPC, never a 500."""
    headers = {**bearer(make_user("ivy")), "Content-Type": "application/json"}
    unknown = '{"jsonrpc": "2.0", "id": "a\\ud83d", "method": "ping\\ud83d"}'
    call = '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "x\\ud83d"}}'

    answered = client.post("/mcp", data=unknown, headers=headers)
    called = client.post("/mcp", data=call, headers=headers)

    assert answered.status_code == 200 and answered.json["id"] == "a\ufffd"
    assert "does not answer ping\ufffd." in answered.json["error"]["message"]
    assert called.status_code == 200
    assert called.json["error"]["message"].startswith("The tool x\ufffd is not offered to you.")
