"""The provider connection test: the task lists models, and the API awaits it through a worker."""

from __future__ import annotations

import logging

import pytest

from core.extensions import db
from core.models import Provider
from tests.support.fake_model import FakeModel, Reply
from tests.support.processes import free_port
from webapp.api import providers as providers_api
from workers import admin_tasks

KEY = "sk-right-key-123456"


@pytest.fixture
def fake_model():
    """A fake provider that accepts only KEY and offers two models."""
    with FakeModel(models=["small", "large"], api_key=KEY) as fake:
        yield fake


def store_provider(app, base_url: str, api_key: str | None) -> str:
    """Store a provider and return its id."""
    with app.app_context():
        provider = Provider(name="fake", base_url=base_url, api_key=api_key, models=[])
        db.session.add(provider)
        db.session.commit()
        return provider.id


def test_the_task_lists_the_models_of_a_provider_with_the_right_key(app, fake_model, caplog):
    provider_id = store_provider(app, fake_model.base_url, KEY)
    caplog.set_level(logging.INFO)
    with app.app_context():
        outcome = admin_tasks.probe_provider.run(provider_id)
    assert outcome["ok"] is True and outcome["models"] == ["large", "small"]
    assert fake_model.last_request().headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in caplog.text


def test_the_task_reports_a_wrong_key_as_the_providers_sentence_without_the_key(app, fake_model):
    provider_id = store_provider(app, fake_model.base_url, "sk-wrong-key-987654")
    with app.app_context():
        outcome = admin_tasks.probe_provider.run(provider_id)
    assert outcome["ok"] is False
    assert outcome["error"].startswith("The provider fake rejected its API key.")
    assert "sk-wrong-key-987654" not in outcome["error"]


def test_a_refused_test_tells_the_admin_what_to_do_not_to_ask_an_admin(app, fake_model):
    """Issue 25: the admin testing a connection read "ask an admin" in every refusal."""
    provider_id = store_provider(app, fake_model.base_url, KEY)
    for reply in (Reply.error(500), Reply.error(418, body={})):
        fake_model.script(reply)
        with app.app_context():
            outcome = admin_tasks.probe_provider.run(provider_id)
        assert outcome["ok"] is False
        assert "test again" in outcome["error"], outcome["error"]
        assert "admin" not in outcome["error"].lower(), outcome["error"]


def test_the_task_reports_a_provider_that_is_not_running(app):
    provider_id = store_provider(app, f"http://127.0.0.1:{free_port()}/v1", None)
    with app.app_context():
        outcome = admin_tasks.probe_provider.run(provider_id)
    assert outcome["ok"] is False
    assert "could not reach the provider fake" in outcome["error"]


def test_the_test_marks_which_models_can_call_a_tool_and_their_reported_context(app):
    """Issue 30: Import models ticked Tools for every model, whether or not its server could
    make tool calls; the test now asks each for one tiny tool call."""

    def answer(request: dict) -> Reply:
        if request["model"] == "caller":
            return Reply.tool_calls([("ping", {})])
        return Reply.text("Pong, in words.")

    with FakeModel(
        models=["talker", "caller", "refuser"],
        refuses_tools={"refuser"},
        contexts={"caller": 8192},
        responder=answer,
    ) as fake:
        provider_id = store_provider(app, fake.base_url, None)
        with app.app_context():
            outcome = admin_tasks.probe_provider.run(provider_id)
        probes = [r.json for r in fake.chat_requests()]
    assert outcome["found"] == [
        {"name": "caller", "contextTokens": 8192, "tools": True},
        {"name": "refuser", "contextTokens": None, "tools": False},
        {"name": "talker", "contextTokens": None, "tools": None},
    ]
    assert outcome["note"] == (
        "Lookout could not tell whether talker can call tools: Import leaves Tools unticked for "
        "them. Tick it for those whose documentation says they can."
    )
    assert all(p["tools"][0]["function"]["name"] == "ping" for p in probes)
    assert all(p["tool_choice"] == "auto" and p["max_tokens"] == 64 for p in probes)


def test_a_busy_server_is_reported_busy_not_silent(app, monkeypatch):
    """Issue 30: Test connection on a server busy with another request (its keep-alive pings
    arriving) said "did not answer in time" after 8 s."""
    monkeypatch.setattr(admin_tasks, "TEST_TIMEOUT_SECONDS", 1.0)
    with FakeModel(models=["m"], default=Reply.hang(pings=0.2)) as fake:
        provider_id = store_provider(app, fake.base_url, None)
        with app.app_context():
            outcome = admin_tasks.probe_provider.run(provider_id)
    assert outcome["ok"] is True and outcome["found"][0]["tools"] is None
    assert outcome["note"].startswith(
        "The provider fake is reachable but busy: it did not answer within 1 seconds (a model "
        "server often answers one request at a time). Test again when it is idle."
    )


def test_the_task_reports_a_provider_deleted_meanwhile(app):
    with app.app_context():
        outcome = admin_tasks.probe_provider.run("no-such-id")
    assert outcome == {"ok": False, "error": "There is no such provider. Reload the page."}


@pytest.mark.integration
def test_the_api_answers_with_the_models_a_worker_listed(
    app, celery_worker, signed_in_client, fake_model
):
    provider_id = store_provider(app, fake_model.base_url, KEY)
    response = signed_in_client("root", admin=True).post(f"/api/admin/providers/{provider_id}/test")
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["ok"] is True and body["models"] == ["large", "small"]
    assert [m["tools"] for m in body["found"]] == [None, None]
    # Only the health ping's task lines are kept out of the log (workers/ping_logs.py).
    assert "Task lookout.probe_provider[" in celery_worker.log.read_text()


@pytest.mark.integration
def test_the_api_gives_a_wrong_keys_readable_error_and_never_the_key(
    app, celery_worker, signed_in_client, fake_model
):
    provider_id = store_provider(app, fake_model.base_url, "sk-wrong-key-987654")
    response = signed_in_client("root", admin=True).post(f"/api/admin/providers/{provider_id}/test")
    assert response.status_code == 200
    body = response.get_json()
    assert body["ok"] is False
    assert body["error"] == (
        "The provider fake rejected its API key. Edit the provider, enter its current key in "
        "API key, save and test again."
    )
    assert "sk-wrong-key-987654" not in response.get_data(as_text=True)
    assert "sk-wrong-key-987654" not in celery_worker.log.read_text()


@pytest.mark.integration
def test_the_api_answers_503_when_no_worker_answers(app, signed_in_client, monkeypatch):
    monkeypatch.setattr(providers_api, "TEST_TIMEOUT_SECONDS", 1.0)
    provider_id = store_provider(app, "http://127.0.0.1:9/v1", "sk-secret-key-555")
    response = signed_in_client("root", admin=True).post(f"/api/admin/providers/{provider_id}/test")
    assert response.status_code == 503
    message = response.get_json()["error"]["message"]
    assert message.startswith("No worker answered lookout.probe_provider within 1 seconds.")
    assert "sk-secret-key-555" not in response.get_data(as_text=True)


def test_only_admins_may_test_a_connection(app, signed_in_client):
    provider_id = store_provider(app, "http://127.0.0.1:9/v1", None)
    response = signed_in_client("alice").post(f"/api/admin/providers/{provider_id}/test")
    assert response.status_code == 403


def test_testing_an_unknown_provider_is_a_404(signed_in_client):
    response = signed_in_client("root", admin=True).post("/api/admin/providers/nope/test")
    assert response.status_code == 404
