"""/metrics: what an operator's Prometheus reads after real turns, and who may read it.

The web app runs in gunicorn and the turn in a Celery worker, each a process of its own sharing
one PROMETHEUS_MULTIPROC_DIR, as ./run starts them: a count made in the worker shows in the
web process's answer only through prometheus-client's multiprocess mode.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import uuid
from datetime import timedelta

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from core.extensions import db
from core.models import ApiToken, Message, PluginOptions, Provider, Turn, UsageCount, User
from core.models.base import utcnow
from tests.support.chat import ChatClient
from tests.support.fake_model import FakeModel, Reply
from tests.support.processes import ROOT, free_port, wait_until
from tests.support.web_process import WebProcess
from tests.support.workers import CeleryWorker
from tests.workers.conftest import make_chat_app
from webapp import create_app
from webapp.metrics_endpoint import METRICS_OFF, METRICS_REFUSED

pytestmark = pytest.mark.integration

TOKEN = "scrape-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def metrics_app(tmp_path_factory, redis_url, sqlite_template):
    """An app whose processes share a metrics folder; /metrics needs TOKEN (no address may
    read it without one: the allowed network holds no loopback address). The admin's search
    engine is a SearXNG on a loopback port nothing listens on: it is down."""
    folder = tmp_path_factory.mktemp("metrics")
    app = make_chat_app(
        tmp_path_factory,
        redis_url,
        sqlite_template,
        LOOKOUT_PLUGINS="tests.workers.turn_plugins,tools.web_fetch,tools.web_search",
        PROMETHEUS_MULTIPROC_DIR=str(folder),
        METRICS_TOKEN=TOKEN,
        METRICS_ALLOW="10.99.0.0/16",
    )
    with app.app_context():
        down = f"http://127.0.0.1:{free_port()}"
        options = {"engine": "searxng", "baseURL": down, "enabledByDefault": True}
        db.session.add(PluginOptions(plugin_id="web_search", options=options))
        db.session.commit()
    yield app
    with app.app_context():
        db.engine.dispose()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def web(metrics_app, tmp_path_factory):
    """The app in gunicorn, with a worker process answering its turns."""
    logs = tmp_path_factory.mktemp("metrics-logs")
    with CeleryWorker(metrics_app, logs, concurrency=4) as worker:
        with WebProcess(metrics_app, logs) as server:
            server.worker_log = worker.log
            yield server


def chat_with(app, fake: FakeModel, url: str) -> tuple[ChatClient, str]:
    """Register ``fake`` as a provider of its own and a new user; return their client and the
    model id."""
    name = uuid.uuid4().hex[:8]
    with app.app_context():
        db.session.add(
            Provider(name=name, base_url=fake.base_url, models=[{"name": "m", "tools": True}])
        )
        user = User.make(f"u-{name}", "password")
        db.session.add(user)
        row, token = ApiToken.make(user, "t")
        db.session.add(row)
        db.session.commit()
    return ChatClient(url, token), f"{name}/m"


def scrape(url: str) -> dict[tuple[str, tuple], float]:
    """Return every sample of /metrics as {(name, sorted labels): value}."""
    answer = requests.get(
        f"{url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
    )
    assert answer.status_code == 200, answer.text
    assert answer.headers["Content-Type"].startswith("text/plain; version=")
    samples = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict, name: str, **labels: str) -> float:
    """Return one sample's value, 0 when the series has no such sample yet."""
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def assert_documented(url: str) -> None:
    """Check that the README documents every series published, and that the dashboard reads
    only published samples (asked after a turn that made every kind of sample)."""
    answer = requests.get(
        f"{url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
    )
    families = [
        f for f in text_string_to_metric_families(answer.text) if f.name.startswith("lookout_")
    ]
    samples = {sample.name for family in families for sample in family.samples}
    readme = (ROOT / "README.md").read_text()
    documented = {name.removesuffix("_total") for name in re.findall(r"`(lookout_\w+)`", readme)}
    assert documented == {family.name for family in families}
    dashboard = (ROOT / "docs" / "grafana-dashboard.json").read_text()
    assert set(re.findall(r"lookout_\w+", dashboard)) <= samples


def test_a_turn_with_tool_calls_is_counted_from_the_worker(metrics_app, web, fake_model):
    chat, model = chat_with(metrics_app, fake_model, web.url)
    before = scrape(web.url)
    fake_model.script(
        Reply.tool_calls(
            [
                ("echo", {"text": "hi"}),
                ("web_fetch", {"url": "http://127.0.0.1:9/private"}),
                ("web_search", {"query": "lighthouses"}),
            ],
            usage=(10, 5),
        ),
        Reply.text("Done.", usage=(7, 3)),
    )
    turn = chat.run(chat.new_conversation(), "Look it up.", model)
    assert turn["status"] == "completed"
    after = scrape(web.url)

    def added(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert added("lookout_turns_finished_total", outcome="completed") == 1
    assert added("lookout_tool_calls_total", tool="echo", outcome="ok") == 1
    assert added("lookout_tool_calls_total", tool="web_fetch", outcome="refused") == 1
    assert added("lookout_tool_call_seconds_count", tool="echo", engine="") == 1
    assert added("lookout_tool_call_seconds_count", tool="web_fetch", engine="") == 1
    assert added("lookout_guard_refusals_total", reason="loopback") == 1
    # The failed search says which engine failed it, and why; its call names none.
    assert added("lookout_tool_calls_total", tool="web_search", outcome="error") == 1
    assert added("lookout_search_failures_total", engine="searxng", reason="down") == 1
    assert added("lookout_tool_call_seconds_count", tool="web_search", engine="") == 1
    assert added("lookout_model_step_seconds_count", model=model) == 2
    assert added("lookout_model_tokens_total", model=model, kind="input") == 17
    assert added("lookout_model_tokens_total", model=model, kind="output") == 8
    # Outcomes that never happened show as 0, not as missing series.
    assert ("lookout_turns_finished_total", (("outcome", "cancelled"),)) in after
    assert_documented(web.url)


def test_tool_names_a_model_invents_are_counted_as_unknown_everywhere(metrics_app, web, fake_model):
    """Issue 24: a model's made-up tool names went as they were into metric labels (a new
    series each), usage rows and log lines (a newline in one forged a log line)."""
    chat, model = chat_with(metrics_app, fake_model, web.url)
    marker = uuid.uuid4().hex
    invented = [f"made_up_{marker}", f"x\nINFO forged {marker}", "y" * 500 + marker]
    before = scrape(web.url)
    fake_model.script(
        Reply.tool_calls([(name, {}) for name in invented] + [("echo", {"text": "hi"})]),
        Reply.text("Done."),
    )
    turn = chat.run(chat.new_conversation(), "Use your tools.", model)
    assert turn["status"] == "completed"
    after = scrape(web.url)
    tools = {dict(labels).get("tool") for (_, labels) in after}
    assert tools <= {None, "unknown", "echo", "web_fetch", "web_search"}
    added = value(after, "lookout_tool_calls_total", tool="unknown", outcome="error") - value(
        before, "lookout_tool_calls_total", tool="unknown", outcome="error"
    )
    assert added == 3
    user_id = chat.call("GET", "/api/me").json()["id"]
    with metrics_app.app_context():
        details = db.session.scalars(
            db.select(UsageCount.detail).filter_by(user_id=user_id, metric="toolErrors")
        ).all()
    assert details == ["unknown"]
    log = web.worker_log.read_text()
    assert marker not in log
    assert "tool=unknown" in log


def test_open_event_streams_are_counted_while_open(metrics_app, web, fake_model):
    chat, model = chat_with(metrics_app, fake_model, web.url)
    fake_model.script(Reply.text("tick " * 40, chunks=40, delay=0.1))
    started = chat.start(chat.new_conversation(), "Talk slowly.", model)
    stream = chat.call("GET", f"/api/turns/{started['turn']['id']}/events", stream=True, timeout=30)
    lines = stream.iter_lines(decode_unicode=True)
    assert next(line for line in lines if line.startswith("event:"))
    assert value(scrape(web.url), "lookout_event_streams_open") == 1
    stream.close()
    wait_until(
        lambda: value(scrape(web.url), "lookout_event_streams_open") == 0,
        10,
        "the closed event stream was still counted as open",
    )
    chat.wait(started["turn"]["id"])


def test_the_queue_is_read_when_scraped(metrics_app, web, fake_model):
    """A turn no worker has taken for two minutes shows in the depth and the oldest age."""
    chat, model = chat_with(metrics_app, fake_model, web.url)
    conversation = chat.new_conversation()
    with metrics_app.app_context():
        message = Message(conversation_id=conversation, role="user", parts=[], status="completed")
        db.session.add(message)
        db.session.flush()
        turn = Turn(
            conversation_id=conversation,
            user_message_id=message.id,
            model=model,
            status="queued",
            created_at=utcnow() - timedelta(minutes=2),
        )
        db.session.add(turn)
        db.session.commit()
        turn_id = turn.id
    try:
        samples = scrape(web.url)
        assert value(samples, "lookout_turns_queued") >= 1
        assert value(samples, "lookout_oldest_queued_turn_age_seconds") >= 120
        assert ("lookout_task_queue_length", ()) in samples
    finally:
        with metrics_app.app_context():
            db.session.execute(db.delete(Turn).where(Turn.id == turn_id))
            db.session.commit()
    assert value(scrape(web.url), "lookout_oldest_queued_turn_age_seconds") < 120


def test_metrics_are_refused_without_the_token(web):
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        answer = requests.get(f"{web.url}/metrics", headers=headers, timeout=10)
        assert answer.status_code == 403
        assert answer.json() == {"error": {"message": METRICS_REFUSED, "fields": {}}}


@pytest.fixture
def app_with(tmp_path, redis_url, sqlite_template):
    """Return a factory of in-process apps with the given metrics settings."""

    def make(**settings):
        path = tmp_path / f"{uuid.uuid4().hex[:8]}.db"
        shutil.copyfile(sqlite_template, path)
        config = {"TESTING": True, "SECRET_KEY": "metrics", "DATABASE_URL": f"sqlite:///{path}"}
        return create_app({**config, "REDIS_URL": redis_url, **settings})

    return make


def test_metrics_from_an_allowed_network_need_no_token(app_with):
    client = app_with(METRICS_ALLOW="10.99.0.0/16, 192.0.2.7").test_client()
    assert client.get("/metrics", environ_base={"REMOTE_ADDR": "10.99.3.4"}).status_code == 200
    assert client.get("/metrics", environ_base={"REMOTE_ADDR": "192.0.2.7"}).status_code == 200
    refused = client.get("/metrics", environ_base={"REMOTE_ADDR": "10.98.0.1"})
    assert refused.status_code == 403
    assert refused.json["error"]["message"] == METRICS_REFUSED


def test_behind_a_trusted_proxy_metrics_allow_judges_the_forwarded_client(app_with):
    """With TRUSTED_PROXIES=1, a proxy on the same host (127.0.0.1) does not open the metrics to
    whoever it forwards: the client it names is judged, as sign-in limits judge it."""
    client = app_with(METRICS_ALLOW="127.0.0.1/32", TRUSTED_PROXIES=1).test_client()
    via_proxy = {"REMOTE_ADDR": "127.0.0.1"}
    outsider = client.get(
        "/metrics", environ_base=via_proxy, headers={"X-Forwarded-For": "203.0.113.9"}
    )
    assert outsider.status_code == 403
    assert outsider.json["error"]["message"] == METRICS_REFUSED
    local = client.get("/metrics", environ_base=via_proxy, headers={"X-Forwarded-For": "127.0.0.1"})
    assert local.status_code == 200


def test_a_request_forwarded_by_an_untrusted_proxy_is_not_let_in_by_address(app_with):
    """Issue 24: with TRUSTED_PROXIES unset, a same-host proxy made every visitor it forwarded
    look like 127.0.0.1, which METRICS_ALLOW let in. A request naming a client of its own comes
    from an unknown client; a scraper reaching Lookout directly, or sending the token, still
    reads the metrics."""
    client = app_with(METRICS_ALLOW="127.0.0.1/32", METRICS_TOKEN="scrape-token").test_client()
    local = {"REMOTE_ADDR": "127.0.0.1"}
    for forwarded in ({"X-Forwarded-For": "203.0.113.9"}, {"Forwarded": "for=203.0.113.9"}):
        refused = client.get("/metrics", environ_base=local, headers=forwarded)
        assert refused.status_code == 403
        assert refused.json["error"]["message"] == METRICS_REFUSED
    assert client.get("/metrics", environ_base=local).status_code == 200
    with_token = {"X-Forwarded-For": "203.0.113.9", "Authorization": "Bearer scrape-token"}
    assert client.get("/metrics", environ_base=local, headers=with_token).status_code == 200


def test_an_ipv4_client_seen_through_an_ipv6_socket_is_judged_as_ipv4(app_with):
    client = app_with(METRICS_ALLOW="10.99.0.0/16").test_client()
    mapped = client.get("/metrics", environ_base={"REMOTE_ADDR": "::ffff:10.99.0.5"})
    assert mapped.status_code == 200


def test_metrics_are_off_until_an_operator_opens_them(app_with):
    answer = app_with().test_client().get("/metrics")
    assert answer.status_code == 404
    assert answer.json == {"error": {"message": METRICS_OFF, "fields": {}}}


# Run in a process of its own, so that what it imports is the host's doing and no other test's.
THIRD_PARTY_SEARCH = """
import json, sys
from tools.api import ToolError
from tools.testing import tool_context_for_test
from webapp import create_app
from core.plugin_host import get_host

app = create_app(json.loads(sys.argv[1]))
with app.app_context():
    tool = get_host().find_tool("acme_search")
    try:
        tool.execute(tool.validate_input({"query": "lighthouses"}), tool_context_for_test()[0])
    except ToolError:
        pass
answer = app.test_client().get("/metrics", environ_base={"REMOTE_ADDR": "10.99.0.1"})
print(json.dumps({
    "metrics": answer.get_data(as_text=True),
    "plugins": sorted(m for m in sys.modules if m.split(".")[:2] in (
        ["tools", "web_search"], ["tools", "web_fetch"], ["tools", "pdf"]
    )),
}))
"""


def test_a_third_party_search_plugins_failure_is_counted_without_the_host_naming_it(
    tmp_path, redis_url, sqlite_template
):
    """A search plugin reports its engine's failed search through the plugin API alone, and
    /metrics counts it with the built-in engines' failures: the host loads no plugin it was
    not asked to, and names none to hear of failures."""
    path = tmp_path / "lookout.db"
    shutil.copyfile(sqlite_template, path)
    config = {
        "TESTING": True,
        "SECRET_KEY": "metrics",
        "DATABASE_URL": f"sqlite:///{path}",
        "REDIS_URL": redis_url,
        "METRICS_ALLOW": "10.99.0.0/16",
        "LOOKOUT_PLUGINS": "tests.webapp.third_party_search",
    }
    run = subprocess.run(
        [sys.executable, "-c", THIRD_PARTY_SEARCH, json.dumps(config)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout.splitlines()[-1])
    assert answer["plugins"] == []
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(answer["metrics"])
        for sample in family.samples
    }
    failed = value(samples, "lookout_search_failures_total", engine="acme", reason="rate-limited")
    assert failed == 1
