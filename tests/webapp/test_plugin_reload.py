"""Saved plugin options reach a running worker process without a restart."""

from __future__ import annotations

import time

import pytest

from tests.support.fake_model import FakeModel, Reply
from tests.support.models import add_fake_provider

pytestmark = pytest.mark.integration


@pytest.fixture
def app(make_app):
    """An app listing the keyed sample plugin, whose tool returns its `engine` option."""
    return make_app(LOOKOUT_PLUGINS="tests.tools.sample_plugins.keyed")


@pytest.fixture
def model(app):
    """A fake model registered as a provider; yields (FakeModel, model id)."""
    with FakeModel() as fake:
        yield fake, add_fake_provider(app, fake.base_url)


def tool_output(client, model_id: str) -> object:
    """Run a turn that calls keyed_search and return the tool's output (or its error)."""
    conversation = client.post("/api/conversations", json={}).get_json()["id"]
    body = {"model": model_id, "content": "go", "generation": {"tools": ["keyed_search"]}}
    started = client.post(f"/api/conversations/{conversation}/turns", json=body)
    assert started.status_code == 202, started.get_json()
    turn_id = started.get_json()["turn"]["id"]
    deadline = time.monotonic() + 30
    while (turn := client.get(f"/api/turns/{turn_id}").get_json())["status"] in (
        "queued",
        "running",
    ):
        assert time.monotonic() < deadline, turn
        time.sleep(0.05)
    messages = client.get(f"/api/conversations/{conversation}").get_json()["messages"]
    reply = next(m for m in messages if m["id"] == turn["assistantMessageId"])
    result = next(p for p in reply["parts"] if p["type"] == "tool-result")
    return result.get("output", result.get("error"))


def test_a_worker_uses_newly_saved_options_without_a_restart(
    signed_in_client, celery_worker, model
):
    fake, model_id = model
    admin = signed_in_client("root", admin=True)
    options = "/api/admin/plugins/keyed/options"
    assert admin.put(options, json={"engine": "first", "apiKey": "k"}).status_code == 200
    fake.script(Reply.tool_calls([("keyed_search", {})]), Reply.text("ok"))
    assert tool_output(admin, model_id) == "first"  # the worker has built its host now
    assert admin.put(options, json={"engine": "second"}).status_code == 200
    fake.script(Reply.tool_calls([("keyed_search", {})]), Reply.text("ok"))
    assert tool_output(admin, model_id) == "second", celery_worker.log.read_text()[-2000:]
