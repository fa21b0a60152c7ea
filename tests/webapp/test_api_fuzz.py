"""Fuzzing: schemathesis runs every operation of the OpenAPI description against the app served
over HTTP with a real worker, as a signed-in admin (session cookie and CSRF header, as the
pages call it) and as a user with a bearer token.

No answer may be a 500, every answer must be what the description says (its status, and its
JSON: every error in the one error shape), and a 429 (fair use) is always accepted. The URL
fields admins set (provider and engine base URLs), which Lookout fetches without its guarded
fetch, are pinned to the loopback fake model; and this process and the worker refuse every
connection outside 127.0.0.0/8 and ::1 (tests/support/loopback.py), failing the test on any
attempt. About half the cases name real rows in their path, so that the views behind a 404
run too.

``FUZZ_EXAMPLES`` sets the examples per operation, mode (valid, invalid) and identity (default
10, which keeps the module under three minutes on two busy cores); ``FUZZ_REPORT`` names a
file to append the answers seen to. docs/reliability.md names the longer run.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
import zlib
from collections import Counter
from types import SimpleNamespace
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import given
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from core.extensions import db
from core.models import ApiToken, Conversation, Message, Provider, Turn, User
from tests.conftest import RUN_ID
from tests.support import accounts, loopback
from tests.support.fake_model import FakeModel
from tests.support.fuzzing import fuzz_settings
from tests.support.live_server import LiveServer
from tests.support.workers import CeleryWorker
from webapp import create_app
from webapp.api.openapi import make_spec

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "10"))
# One example of every operation in both modes took up to 10 s on two busy cores: twice that.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(max(300, EXAMPLES * 20))]
URL_FIELDS = {"baseUrl", "baseURL"}
ACCEPTED = {429}  # the fair-use limits may answer any request with it
CALL_TIMEOUT = 30
# Each answer against the description, and invalid input refused. (Missing authentication is
# the authorization matrix's: a signed-in session keeps its cookie whatever a check strips.)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
]


@pytest.fixture(scope="module")
def guard_log(tmp_path_factory):
    """The loopback guard in this process for the module; yields the file refusals go to."""
    log = tmp_path_factory.mktemp("guard") / "refused.log"
    guard = loopback.install(log)
    yield log
    loopback.uninstall(guard)


@pytest.fixture(scope="module")
def fuzz_app(tmp_path_factory, redis_url, sqlite_template):
    """An app with the built-in plugins, on its own database and queue."""
    path = tmp_path_factory.mktemp("fuzz") / "lookout.db"
    shutil.copyfile(sqlite_template, path)
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "fuzz-tests",
            "DATABASE_URL": f"sqlite:///{path}",
            "REDIS_URL": redis_url,
            "CELERY_QUEUE": f"lookout-fuzz-{RUN_ID}-{uuid.uuid4().hex[:8]}",
            "TURN_MAX_STEPS": 2,
        }
    )
    yield app
    with app.app_context():
        db.engine.dispose()


def make_rows(app, model_url: str) -> dict[str, Any]:
    """Store the admin, the user and the rows fuzzed ids may name; return their ids."""
    with app.app_context():
        admin = User.make(f"admin-{uuid.uuid4().hex[:6]}", "password", admin=True)
        user = User.make(f"user-{uuid.uuid4().hex[:6]}", "password")
        provider = Provider(
            name=f"fuzz-{uuid.uuid4().hex[:6]}",
            base_url=model_url,
            models=[{"name": "m", "tools": True}],
        )
        db.session.add_all([admin, user, provider])
        db.session.flush()
        row, token = ApiToken.make(user, "fuzz")
        db.session.add(row)
        conversations, turns, messages = [], [], []
        for owner in (admin, user):
            conversation = Conversation(owner_id=owner.id, title="Fuzzed")
            db.session.add(conversation)
            db.session.flush()
            question = Message(
                conversation_id=conversation.id, role="user", parts=[], status="completed"
            )
            db.session.add(question)
            db.session.flush()
            turn = Turn(
                conversation_id=conversation.id,
                user_message_id=question.id,
                model=f"{provider.name}/m",
                status="completed",
            )
            db.session.add(turn)
            db.session.flush()
            conversations.append(conversation.id)
            turns.append(turn.id)
            messages.append(question.id)
        db.session.commit()
        return {
            "admin": admin.name,
            "model": f"{provider.name}/m",
            "token": token,
            "conversation_id": conversations,
            "turn_id": turns,
            "message_id": messages,
            "provider_id": [provider.id],
            "plugin_id": ["web_search", "web_fetch", "pdf"],
            "name": ["web_search", "web_fetch"],
        }


def session_of(base_url: str, name: str) -> requests.Session:
    """Return a requests session signed in through the form, sending its CSRF token."""
    session = requests.Session()
    page = session.get(f"{base_url}/sign-in", timeout=10)
    form = {"name": name, "password": "password", "csrf_token": accounts.csrf_token_from(page.text)}
    signed_in = session.post(f"{base_url}/sign-in", data=form, timeout=10, allow_redirects=False)
    assert signed_in.status_code == 302, signed_in.text
    home = session.get(f"{base_url}/", timeout=10)
    session.headers["X-CSRFToken"] = accounts.csrf_token_from(home.text)
    return session


@pytest.fixture(scope="module")
def fuzz_server(fuzz_app, guard_log, tmp_path_factory):
    """The app over HTTP with a guarded worker and the fake model: (server URL, model URL)."""
    with FakeModel() as model:
        env = loopback.environ({}, guard_log)
        worker_logs = tmp_path_factory.mktemp("fuzz-worker")
        with CeleryWorker(fuzz_app, worker_logs, concurrency=4, extra_env=env):
            with LiveServer(fuzz_app) as server:
                yield server.url, model.base_url
    assert not guard_log.exists(), f"Connections outside loopback:\n{guard_log.read_text()}"


@pytest.fixture
def fuzzed(fuzz_app, fuzz_server):
    """Fresh rows for one test (a run may delete or rename them) and both identities."""
    url, model_url = fuzz_server
    rows = make_rows(fuzz_app, model_url)
    bearer = requests.Session()
    bearer.headers["Authorization"] = f"Bearer {rows['token']}"
    yield SimpleNamespace(
        url=url,
        model_url=model_url,
        admin=session_of(url, rows["admin"]),
        bearer=bearer,
        rows=rows,
        seen=Counter(),
    )
    bearer.close()


def pin_urls(value: Any, url: str) -> Any:
    """Return ``value`` with every text under a URL field replaced by ``url``."""
    if isinstance(value, dict):
        return {
            key: url if key in URL_FIELDS and isinstance(item, str) else pin_urls(item, url)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [pin_urls(item, url) for item in value]
    return value


def real_ids(case, server) -> None:
    """Replace the path ids of about half the cases with ones of stored rows, chosen from the
    case itself, so that hypothesis replays a case the same way."""
    drawn = zlib.crc32(repr((case.path_parameters, case.query, case.body)).encode())
    for key, value in (case.path_parameters or {}).items():
        choices = server.rows.get(key)
        if choices and isinstance(value, str) and drawn % 2 == 0:
            case.path_parameters[key] = choices[(drawn // 2) % len(choices)]


def run(case, server, session: requests.Session) -> None:
    """Send the case as ``session`` and check its answer against the description."""
    real_ids(case, server)
    if isinstance(case.body, dict | list):
        case.body = pin_urls(case.body, server.model_url)
        model = case.body.get("model") if isinstance(case.body, dict) else None
        if isinstance(model, str) and zlib.crc32(model.encode("utf-8", "replace")) % 2 == 0:
            # Half the turns name a real model and nothing unknown besides, so that they run.
            case.body["model"] = server.rows["model"]
            case.body.pop("attachments", None)
            case.body.pop("parentMessageId", None)
    response = case.call(base_url=server.url, session=session, timeout=CALL_TIMEOUT)
    server.seen[f"{case.operation.label} {response.status_code}"] += 1
    assert response.status_code != 500, response.text
    if response.status_code in ACCEPTED:
        return
    case.validate_response(response, checks=CHECKS)


FUZZ = fuzz_settings(EXAMPLES)


def fuzz_every_operation(app, server, session: requests.Session) -> list[str]:
    """Run valid and invalid cases of every operation as ``session``; return what failed."""
    failures = []
    api = schemathesis.openapi.from_dict(make_spec(app))
    operations = [result.ok() for result in api.get_all_operations()]
    # Deletions last: a conversation or provider deleted early would turn what follows into 404s.
    for operation in sorted(operations, key=lambda op: op.method.upper() == "DELETE"):
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @FUZZ
            @given(case=operation.as_strategy(generation_mode=mode))
            def fuzz(case):
                run(case, server, session)

            try:
                fuzz()
            except (Exception, BaseExceptionGroup) as error:  # every operation is tried
                failures.append(f"{operation.label} ({mode.value}): {error}")
    return failures


def report(fuzzed, identity: str) -> None:
    """Append the answers seen, by operation and status, to ``$FUZZ_REPORT`` when it is set."""
    if os.environ.get("FUZZ_REPORT"):
        with open(os.environ["FUZZ_REPORT"], "a", encoding="utf-8") as file:
            file.write(json.dumps({"identity": identity, "seen": fuzzed.seen}) + "\n")


def test_no_input_makes_the_api_fail_a_signed_in_admin(fuzz_app, fuzzed):
    failures = fuzz_every_operation(fuzz_app, fuzzed, fuzzed.admin)
    report(fuzzed, "admin session")
    assert not failures, "\n\n".join(failures)


def test_no_input_makes_the_api_fail_a_bearer_token(fuzz_app, fuzzed):
    failures = fuzz_every_operation(fuzz_app, fuzzed, fuzzed.bearer)
    report(fuzzed, "user bearer token")
    assert not failures, "\n\n".join(failures)
