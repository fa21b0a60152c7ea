"""The OpenAI-compatible API (issue 28) driven by the official ``openai`` SDK against a live
server, a real worker and the fake model, with web_search on a loopback SearXNG and web_fetch
reading a loopback page (private networks allowed, as the site is loopback)."""

from __future__ import annotations

import json
import shutil
import socket
import time
import uuid

import openai
import pytest

from core.extensions import db, get_redis
from core.limits import set_overrides
from core.models import Conversation, Message, Turn, UsageCount
from core.quotas import WINDOW_SECONDS, key
from core.turn.states import ENDED_STATUSES
from tests.conftest import RUN_ID
from tests.support.chat import ChatClient
from tests.support.chat_page import token_for
from tests.support.fake_model import FakeModel, Reply
from tests.support.live_server import LiveServer
from tests.support.models import add_fake_provider
from tests.support.processes import HANG_SECONDS
from tests.support.quotas import hold_window
from tests.support.sites import Site
from tests.support.workers import CeleryWorker
from webapp import create_app
from webapp.api.openapi import make_spec

pytestmark = pytest.mark.integration
MODEL = "fake/m"
ARTICLE = """<html><head><title>Lighthouses of Brittany</title></head><body>
<article><h1>Lighthouses of Brittany</h1>
<p>The Phare d'Eckmühl stands sixty-five metres tall on the Penmarc'h peninsula.</p>
</article></body></html>"""


@pytest.fixture(scope="module")
def site():
    """A SearXNG that finds one page, and the page, on one loopback server."""
    with Site() as server:
        results = {
            "results": [
                {
                    "title": "Lighthouses of Brittany",
                    "url": server.url("/article"),
                    "content": "The Phare d'Eckmühl.",
                }
            ]
        }
        server.serve("/search", "application/json", json.dumps(results).encode())
        server.serve("/article", "text/html; charset=utf-8", ARTICLE.encode())
        yield server


@pytest.fixture(scope="module")
def fake():
    """The scripted model of the module, registered as the provider ``fake``."""
    with FakeModel() as model:
        yield model


@pytest.fixture(scope="module")
def api_app(tmp_path_factory, redis_url, sqlite_template, fake):
    """An app with the built-in plugins and the fake model, on its own database and queue."""
    path = tmp_path_factory.mktemp("openai-api") / "lookout.db"
    shutil.copyfile(sqlite_template, path)
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "openai-api-tests",
            "DATABASE_URL": f"sqlite:///{path}",
            "REDIS_URL": redis_url,
            "CELERY_QUEUE": f"lookout-openai-{RUN_ID}-{uuid.uuid4().hex[:8]}",
            "ALLOW_PRIVATE_NETWORKS": True,
            "TURN_MAX_STEPS": 4,
        }
    )
    add_fake_provider(app, fake.base_url)
    yield app
    with app.app_context():
        db.engine.dispose()


@pytest.fixture(scope="module")
def server(api_app, tmp_path_factory, site):
    """The app over HTTP with a worker, web_search set to the loopback SearXNG."""
    with CeleryWorker(api_app, tmp_path_factory.mktemp("worker"), concurrency=4):
        with LiveServer(api_app) as live:
            admin = ChatClient(live.url, token_for(api_app, admin=True)[1])
            admin.search_with_searxng(site.url(""))
            live.admin = admin
            yield live


@pytest.fixture
def person(api_app, server):
    """A new user with a chat token: (user, token)."""
    return token_for(api_app)


@pytest.fixture
def client(server, person):
    """The official OpenAI client pointed at Lookout with the user's token (no retries)."""
    with openai.OpenAI(
        base_url=f"{server.url}/v1", api_key=person[1], max_retries=0, timeout=60
    ) as made:
        yield made


@pytest.fixture
def fake_script(fake):
    """Script the fake model for one test; clear what the test left."""
    yield fake.script
    fake.clear_script()


def search_then_read(site) -> tuple[Reply, ...]:
    """The model searches, reads the page it found, and answers."""
    return (
        Reply.tool_calls([("web_search", {"query": "eckmuhl lighthouse height"})]),
        Reply.tool_calls([("web_fetch", {"url": site.url("/article")})]),
        Reply.text("The Phare d'Eckmühl is 65 m tall.", chunks=3),
    )


def stored(api_app, turn_id: str) -> tuple[Turn, list[Message]]:
    """Return the stored turn and the branch its reply ends, oldest message first."""
    with api_app.app_context():
        turn = db.session.get(Turn, turn_id)
        branch, message_id = [], turn.assistant_message_id
        while message_id is not None:
            message = db.session.get(Message, message_id)
            branch.insert(0, message)
            message_id = message.parent_id
        db.session.expunge_all()
    return turn, branch


def wait_for_status(api_app, turn_id: str, wanted: str, timeout: float = HANG_SECONDS) -> None:
    """Wait until the turn has ended, then assert it ended ``wanted``: ``timeout`` is a bound
    only a hang reaches (a turn ends within a second here), never one that decides the status."""
    deadline = time.monotonic() + timeout
    while True:
        with api_app.app_context():
            status = db.session.get(Turn, turn_id).status
        if status in ENDED_STATUSES:
            break
        assert time.monotonic() < deadline, f"turn {turn_id} is still {status} after {timeout} s"
        time.sleep(0.1)
    assert status == wanted, f"turn {turn_id} ended {status}, not {wanted}"


def test_models_are_listed_with_the_ids_to_send(client):
    assert "fake/m" in [model.id for model in client.models.list()]


def test_a_completion_is_grounded_in_a_search_and_a_page_and_cites_it(
    client, api_app, fake, fake_script, site, person
):
    fake_script(*search_then_read(site))
    completion = client.chat.completions.create(
        model=MODEL,
        messages=[
            {"role": "system", "content": "Answer in one sentence."},
            {"role": "user", "content": "Which lighthouse is near Penmarc'h?"},
            {"role": "assistant", "content": "The Phare d'Eckmühl."},
            {"role": "user", "content": [{"type": "text", "text": "How tall is it?"}]},
        ],
    )
    article = site.url("/article")
    answer = completion.choices[0].message.content
    assert answer == (
        f"The Phare d'Eckmühl is 65 m tall.\n\nSources:\n1. [Lighthouses of Brittany]({article})"
    )
    assert completion.choices[0].finish_reason == "stop"
    assert completion.lookout["sources"] == [
        {"number": 1, "url": article, "title": "Lighthouses of Brittany"}
    ]
    assert completion.usage.total_tokens > 0
    # The model searched and read through Lookout's tools; the client ran neither.
    requests = fake.chat_requests()[-3:]
    results = [m["content"] for m in requests[-1].json["messages"] if m["role"] == "tool"]
    assert "Lighthouses of Brittany" in results[0] and "sixty-five metres" in results[1]
    # The request's messages are the conversation's history, the instructions in the question.
    prompt = [(m["role"], m["content"]) for m in requests[0].json["messages"][1:]]
    assert prompt == [
        ("user", "Answer in one sentence.\n\nWhich lighthouse is near Penmarc'h?"),
        ("assistant", "The Phare d'Eckmühl."),
        ("user", "How tall is it?"),
    ]
    turn, messages = stored(api_app, completion.lookout["turnId"])
    assert turn.status == "completed" and completion.id == f"chatcmpl-{turn.id}"
    assert [(m.role, m.parts[0]["text"]) for m in messages[:3]] == prompt
    assert messages[3].role == "assistant" and len(messages) == 4
    with api_app.app_context():
        conversation = db.session.get(Conversation, turn.conversation_id)
        assert conversation.owner_id == person[0].id
        assert conversation.title == "API: How tall is it?"
        # Counted in the user's usage like any turn: the turn and its model's tokens.
        counted = {
            (row.metric, row.detail): row.amount
            for row in db.session.scalars(db.select(UsageCount).filter_by(user_id=person[0].id))
        }
    assert counted[("turns", "completed")] == 1
    assert counted[("outputTokens", MODEL)] == completion.usage.completion_tokens > 0


def test_the_lookout_field_names_the_tools_the_turn_may_use(client, fake, fake_script):
    fake_script(Reply.text("No tools needed."), Reply.text("Searching is allowed."))
    asked = [{"role": "user", "content": "Hello"}]
    client.chat.completions.create(
        model=MODEL, messages=asked, extra_body={"lookout": {"tools": []}}
    )
    assert "tools" not in fake.chat_requests()[-1].json
    client.chat.completions.create(
        model=MODEL, messages=asked, extra_body={"lookout": {"tools": ["web_search"]}}
    )
    offered = fake.chat_requests()[-1].json["tools"]
    assert [tool["function"]["name"] for tool in offered] == ["web_search"]


def test_a_streamed_completion_sends_text_sources_and_usage_as_chunks(client, fake_script, site):
    fake_script(*search_then_read(site))
    stream = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "How tall is the Eckmühl lighthouse?"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    article = site.url("/article")
    assert text == (
        f"The Phare d'Eckmühl is 65 m tall.\n\nSources:\n1. [Lighthouses of Brittany]({article})"
    )
    finished = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert [c.choices[0].finish_reason for c in finished] == ["stop"]
    assert finished[0].lookout["sources"][0]["url"] == article
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0


def test_closing_a_stream_cancels_its_turn(client, api_app, fake_script):
    fake_script(Reply.forever("tick ", delay=0.05))
    stream = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Count forever."}], stream=True
    )
    texts = []
    for chunk in stream:
        texts.append(chunk.choices[0].delta.content or "")
        if "tick" in "".join(texts):
            break
    stream.close()
    turn_id = chunk.id.removeprefix("chatcmpl-")
    wait_for_status(api_app, turn_id, "cancelled")


def test_leaving_a_whole_answer_cancels_its_turn(server, api_app, person, fake, fake_script):
    fake_script(Reply.forever("tick ", delay=0.05))
    asked = len(fake.chat_requests())
    body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "Count."}]})
    with socket.create_connection(("127.0.0.1", server.port)) as connection:
        connection.sendall(
            (
                "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Authorization: Bearer {person[1]}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body.encode())}\r\n\r\n{body}"
            ).encode()
        )
        fake.wait_for_requests(asked + 1, timeout=HANG_SECONDS)
    with api_app.app_context():
        turn = db.session.scalars(
            db.select(Turn).join(Conversation).filter(Conversation.owner_id == person[0].id)
        ).one()
    wait_for_status(api_app, turn.id, "cancelled")


def test_a_bad_token_is_refused_with_401(server):
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="nope", max_retries=0) as client:
        with pytest.raises(openai.AuthenticationError) as refused:
            client.models.list()
    assert refused.value.status_code == 401
    assert set(refused.value.body) == {"message", "type", "param", "code"}
    assert refused.value.body["type"] == "authentication_error"


def test_an_unknown_model_is_a_404_in_openais_shape(client):
    with pytest.raises(openai.NotFoundError) as refused:
        client.chat.completions.create(
            model="nobody/none", messages=[{"role": "user", "content": "Hello"}]
        )
    assert refused.value.code == "model_not_found" and refused.value.param == "model"
    assert "GET /v1/models" in refused.value.message


def test_client_side_tools_are_refused_with_400(client, api_app, person):
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "Hello"}], tools=[tool]
        )
    assert refused.value.code == "tools_not_supported" and refused.value.param == "tools"
    assert "lookout.tools" in refused.value.message
    with api_app.app_context():  # nothing was stored for it
        assert (
            db.session.scalar(
                db.select(db.func.count(Conversation.id)).filter_by(owner_id=person[0].id)
            )
            == 0
        )


def test_an_invalid_body_is_a_400_naming_the_field(client):
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model=MODEL, messages=[])
    assert refused.value.param == "messages"
    assert refused.value.body["type"] == "invalid_request_error"


def test_a_user_over_their_turn_quota_gets_a_429_in_openais_shape(api_app, client, person):
    with api_app.app_context():
        set_overrides(person[0].id, {"turnsPerHour": 1})
        db.session.commit()
        hold_window(get_redis(), key(person[0].id, "turnsPerHour"), WINDOW_SECONDS["hour"])
    asked = [{"role": "user", "content": "Hi"}]
    assert client.chat.completions.create(model=MODEL, messages=asked).choices[0].message.content
    with pytest.raises(openai.RateLimitError) as refused:
        client.chat.completions.create(model=MODEL, messages=asked)
    assert refused.value.body["type"] == "rate_limit_error"
    assert "this hour" in refused.value.message
    assert int(refused.value.response.headers["Retry-After"]) > 0


def test_the_openapi_description_covers_the_v1_routes_in_openais_error_shape(app):
    paths = make_spec(app)["paths"]
    completions = paths["/v1/chat/completions"]["post"]
    assert set(completions["responses"]["200"]["content"]) == {
        "application/json",
        "text/event-stream",
    }
    for status in ("400", "401", "404", "429"):
        schema = completions["responses"][status]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/OpenAIError"}, status
    assert completions["x-token-scope"] == "chat"
    assert paths["/v1/models"]["get"]["responses"]["401"]["content"]["application/json"]


def test_a_turn_that_fails_is_an_error_the_client_is_told_not_to_retry(client, fake_script):
    fake_script(Reply.error(400, {"error": {"message": "context too long"}}))
    with pytest.raises(openai.APIStatusError) as failed:
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "Hi"}])
    assert failed.value.status_code == 502 and failed.value.code == "turn_failed"
    assert failed.value.response.headers["x-should-retry"] == "false"
    assert "The provider fake refused the request" in failed.value.message  # the turn's error


def test_a_streamed_turn_that_fails_ends_its_stream_with_the_error(client, fake_script):
    fake_script(Reply.error(400, {"error": {"message": "context too long"}}))
    stream = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Hi"}], stream=True
    )
    with pytest.raises(openai.APIError) as failed:
        list(stream)
    assert failed.value.code == "turn_failed"


def test_reasoning_comes_as_reasoning_content_never_as_content(client, fake_script):
    reply = Reply.text(
        "Four.", chunks=2, reasoning="Two and two.", usage=(9, 8), reasoning_tokens=5
    )
    fake_script(reply, reply)
    asked = [{"role": "user", "content": "2+2?"}]
    whole = client.chat.completions.create(model=MODEL, messages=asked)
    message = whole.choices[0].message
    assert (message.content, message.reasoning_content) == ("Four.", "Two and two.")
    assert whole.usage.completion_tokens_details.reasoning_tokens == 5
    chunks = list(client.chat.completions.create(model=MODEL, messages=asked, stream=True))
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert "".join(getattr(d, "reasoning_content", None) or "" for d in deltas) == "Two and two."
    assert "".join(d.content or "" for d in deltas) == "Four."
