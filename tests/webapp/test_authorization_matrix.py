"""The authorization matrix: every route of the app, for every kind of caller, and its status.

One row per route and method of ``app.url_map`` (a route without a row fails
``test_every_route_has_a_row``), one column per caller:

    anon      nobody signed in: a browser that opened the sign-in page (it has a CSRF token)
    user      alice, signed in, naming her own conversations, turns and tokens
    other     olga, signed in, naming alice's: someone else's things answer 404, as missing ones
              do, so that their ids tell nothing
    admin     ada, an admin, naming alice's too: being an admin opens no one's conversations
    token     alice's API token (``Authorization: Bearer``, the chat scope), naming her own
              things: it opens no page, makes no token and signs no one out
    revoked   a token alice revoked, naming her things
    disabled  dora, signed in before her account was disabled, naming her own
    ended     carol's session cookie, copied before she signed out (which ends all her sessions),
              naming her own

A disabled account's API token is answered as a revoked token is, on every row.

Session callers send a valid CSRF token, so that a status shows authorization; a session
without one is refused (400) on every unsafe route, and changes nothing
(``test_a_session_without_its_csrf_token_is_refused``). Every request names new things of its
own (see tests/support/callers.py), against the real app on SQLite and Redis with a worker
and a fake model, so turns started here really run. A bracketed note after a route marks a
second row of the same route: the request it makes is described in ``REQUESTS``.
"""

from __future__ import annotations

import html
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace

import pytest

from core.extensions import db
from core.models import Provider, User
from tests.conftest import RUN_ID
from tests.support.callers import (
    Caller,
    Things,
    anonymous_caller,
    ended_session_caller,
    session_caller,
    text_file,
    token_caller,
)
from tests.support.fake_model import FakeModel
from tests.support.workers import CeleryWorker
from webapp import create_app
from webapp.api.openapi import openapi_path
from webapp.errors import CSRF_REFUSED

pytestmark = pytest.mark.integration

MATRIX = """
method route                                      anon user other admin token revoked disabled ended
GET    /                                          302  200  200   200   403   302     302      302
GET    /admin/                                    302  403  403   200   403   302     302      302
GET    /admin/health                              302  403  403   200   403   302     302      302
GET    /admin/mcp-servers                         302  403  403   200   403   302     302      302
GET    /admin/plugins                             302  403  403   200   403   302     302      302
GET    /admin/providers                           302  403  403   200   403   302     302      302
GET    /admin/usage                               302  403  403   200   403   302     302      302
GET    /admin/users                               302  403  403   200   403   302     302      302
GET    /api/admin/health                          401  403  403   200   403   401     401      401
GET    /api/admin/mcp-servers                     401  403  403   200   403   401     401      401
POST   /api/admin/mcp-servers                     401  403  403   201   403   401     401      401
PUT    /api/admin/mcp-servers/<server_name>       401  403  403   200   403   401     401      401
DELETE /api/admin/mcp-servers/<server_name>       401  403  403   204   403   401     401      401
POST   /api/admin/mcp-servers/<server_name>/refresh 401 403 403  200   403   401     401      401
GET    /api/admin/plugins                         401  403  403   200   403   401     401      401
GET    /api/admin/plugins/<plugin_id>/catalog     401  403  403   200   403   401     401      401
PUT    /api/admin/plugins/<plugin_id>/options     401  403  403   200   403   401     401      401
POST   /api/admin/plugins/<plugin_id>/try/<name>  401  403  403   200   403   401     401      401
GET    /api/admin/providers                       401  403  403   200   403   401     401      401
POST   /api/admin/providers                       401  403  403   201   403   401     401      401
GET    /api/admin/providers/<provider_id>         401  403  403   200   403   401     401      401
PATCH  /api/admin/providers/<provider_id>         401  403  403   200   403   401     401      401
DELETE /api/admin/providers/<provider_id>         401  403  403   204   403   401     401      401
POST   /api/admin/providers/<provider_id>/test    401  403  403   200   403   401     401      401
POST   /api/admin/providers/test                  401  403  403   200   403   401     401      401
GET    /api/admin/usage                           401  403  403   200   403   401     401      401
GET    /api/admin/usage.csv                       401  403  403   200   403   401     401      401
GET    /api/admin/users                           401  403  403   200   403   401     401      401
POST   /api/admin/users                           401  403  403   201   403   401     401      401
PATCH  /api/admin/users/<user_id>                 401  403  403   200   403   401     401      401
POST   /api/admin/users/<user_id>/password        401  403  403   200   403   401     401      401
GET    /api/admin/users/<user_id>/limits          401  403  403   200   403   401     401      401
PUT    /api/admin/users/<user_id>/limits          401  403  403   200   403   401     401      401
GET    /api/conversations                         401  200  200   200   200   401     401      401
POST   /api/conversations                         401  201  201   201   201   401     401      401
GET    /api/conversations/<conversation_id>       401  200  404   404   200   401     401      401
PATCH  /api/conversations/<conversation_id>       401  200  404   404   200   401     401      401
DELETE /api/conversations/<conversation_id>       401  204  404   404   204   401     401      401
POST   /api/conversations/<conversation_id>/turns 401  202  404   404   202   401     401      401
POST   /api/messages/<message_id>/continue        401  202  404   404   202   401     401      401
GET    /api/me                                    401  200  200   200   200   401     401      401
GET    /api/models                                401  200  200   200   200   401     401      401
GET    /api/openapi.json                          401  200  200   200   200   401     401      401
PUT    /api/plugins/<plugin_id>/settings          401  200  200   200   200   401     401      401
DELETE /api/plugins/<plugin_id>/settings          401  204  204   204   204   401     401      401
PUT    /api/plugins/<plugin_id>/tools/<name>      401  200  200   200   200   401     401      401
GET    /api/plugins/settings                      401  200  200   200   200   401     401      401
POST   /api/tokens                                401  201  201   201   403   401     401      401
GET    /api/tokens                                401  200  200   200   200   401     401      401
DELETE /api/tokens/<token_id>                     401  204  404   404   204   401     401      401
GET    /api/tool-sources                          401  200  200   200   200   401     401      401
GET    /api/tools                                 401  200  200   200   200   401     401      401
POST   /api/turns                                 401  202  202   202   202   401     401      401
POST   /api/turns [attaching an upload]           401  202  400   400   202   401     401      401
GET    /api/turns/<turn_id>                       401  200  404   404   200   401     401      401
POST   /api/turns/<turn_id>/cancel                401  200  404   404   200   401     401      401
GET    /api/turns/<turn_id>/events                401  200  404   404   200   401     401      401
GET    /api/uploads                               401  200  200   200   200   401     401      401
POST   /api/uploads                               401  201  201   201   201   401     401      401
DELETE /api/uploads/<upload_id>                   401  204  404   404   204   401     401      401
GET    /docs/api                                  302  200  200   200   403   302     302      302
GET    /healthz                                   200  200  200   200   200   200     200      200
GET    /mcp                                       405  405  405   405   405   405     405      405
POST   /mcp                                       401  401  401   401   200   401     401      401
GET    /metrics                                   403  403  403   403   403   403     403      403
GET    /metrics [with the metrics token]          200  200  200   200   200   200     200      200
GET    /settings                                  302  200  200   200   403   302     302      302
POST   /settings/password                         302  302  302   302   403   302     302      302
POST   /settings/sign-out-everywhere              302  302  302   302   403   302     302      302
GET    /settings/tokens                           302  200  200   200   403   302     302      302
GET    /sign-in                                   200  302  302   302   302   200     200      200
POST   /sign-in                                   401  302  302   302   302   400     401      401
POST   /sign-out                                  302  302  302   302   403   302     302      302
GET    /static/<path:filename>                    200  200  200   200   200   200     200      200
GET    /v1/models                                 401  200  200   200   200   401     401      401
POST   /v1/chat/completions                       401  200  200   200   200   401     401      401
"""

UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}
MODEL = "matrix/m"  # the provider the module's fixture stores, on the fake model
METRICS_TOKEN = "matrix-metrics-token"  # no account's token or session opens /metrics


@dataclass(frozen=True)
class Row:
    """One line of the matrix: a route, its method, an optional note, and a status per caller."""

    method: str
    rule: str
    note: str
    expected: dict[str, int]

    @property
    def key(self) -> str:
        return f"{self.method} {self.rule}" + (f" [{self.note}]" if self.note else "")


def read_matrix(text: str) -> tuple[list[str], list[Row]]:
    """Return the callers (column names) and the rows of a matrix laid out as above."""
    header, *lines = [line for line in text.strip().splitlines() if line.strip()]
    callers = header.split()[2:]
    rows = []
    for line in lines:
        words = line.split()
        statuses = words[-len(callers) :]
        note = " ".join(words[2 : -len(callers)]).strip("[]")
        expected = dict(zip(callers, map(int, statuses), strict=True))
        rows.append(Row(words[0], words[1], note, expected))
    return callers, rows


CALLERS, ROWS = read_matrix(MATRIX)

# What each request sends beyond its route, keyed as Row.key: path values that differ from
# the defaults (see `path_values`) and a body that succeeds when the caller may act.
Request = Callable[[Things, Caller], dict]
REQUESTS: dict[str, Request] = {
    "GET /api/admin/plugins/<plugin_id>/catalog": lambda t, c: {
        "values": {"plugin_id": "web_search"}
    },
    "PUT /api/admin/plugins/<plugin_id>/options": lambda t, c: {"json": {}},
    "POST /api/admin/mcp-servers": lambda t, c: {
        "json": {"name": f"matrix-{uuid.uuid4().hex[:8]}", "url": "http://127.0.0.1:9/mcp"}
    },
    "PUT /api/admin/mcp-servers/<server_name>": lambda t, c: {
        "values": {"server_name": (name := t.mcp_server())},
        "json": {"name": name, "url": "http://127.0.0.1:9/mcp"},
    },
    "POST /api/admin/plugins/<plugin_id>/try/<name>": lambda t, c: {
        "values": {"plugin_id": "web_search", "name": "web_search"},
        "json": {
            "options": {"engine": "searxng", "baseURL": "http://127.0.0.1:9/"},
            "input": {"query": "x"},
        },
    },
    "POST /api/admin/providers": lambda t, c: {
        "json": {
            "name": f"matrix-{uuid.uuid4().hex[:8]}",
            "baseUrl": t.model_base_url,
            "models": [{"name": "m"}],
        }
    },
    "PATCH /api/admin/providers/<provider_id>": lambda t, c: {"json": {"models": [{"name": "n"}]}},
    "POST /mcp": lambda t, c: {"json": {"jsonrpc": "2.0", "id": 1, "method": "ping"}},
    "POST /api/admin/providers/test": lambda t, c: {"json": {"baseUrl": t.model_base_url}},
    "GET /metrics [with the metrics token]": lambda t, c: {
        "headers": {"Authorization": f"Bearer {METRICS_TOKEN}"}
    },
    "POST /api/admin/users": lambda t, c: {"json": {"name": f"new-{uuid.uuid4().hex[:8]}"}},
    "PATCH /api/admin/users/<user_id>": lambda t, c: {"json": {"disabled": True}},
    "POST /api/admin/users/<user_id>/password": lambda t, c: {"json": {}},
    "PUT /api/admin/users/<user_id>/limits": lambda t, c: {"json": {"openTurns": 5}},
    "POST /api/conversations": lambda t, c: {"json": {"title": "Trip"}},
    "PATCH /api/conversations/<conversation_id>": lambda t, c: {"json": {"title": "Renamed"}},
    "POST /api/conversations/<conversation_id>/turns": lambda t, c: {
        "json": {"content": "Hi", "model": MODEL}
    },
    "POST /api/messages/<message_id>/continue": lambda t, c: {
        "values": {"message_id": t.stopped_reply(c.owner)},
        "json": {},
    },
    "PUT /api/plugins/<plugin_id>/settings": lambda t, c: {"json": {"flavour": "salty"}},
    "PUT /api/plugins/<plugin_id>/tools/<name>": lambda t, c: {"json": {"enabled": True}},
    "POST /api/tokens": lambda t, c: {"json": {"name": "laptop"}},
    "POST /api/turns": lambda t, c: {"json": {"content": "Hi", "model": MODEL}},
    "POST /api/turns [attaching an upload]": lambda t, c: {
        "json": {"content": "Hi", "model": MODEL, "attachments": [t.upload(c.owner)]}
    },
    "POST /api/turns/<turn_id>/cancel": lambda t, c: {
        "values": {"turn_id": t.turn(c.owner, status="queued")}
    },
    "POST /api/uploads": lambda t, c: {"data": text_file()},
    "POST /v1/chat/completions": lambda t, c: {
        "json": {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}]}
    },
    "POST /settings/password": lambda t, c: {
        "data": {
            "current_password": "password",
            "new_password": "password",
            "confirm_password": "password",
            "csrf_token": c.csrf or "",
        }
    },
    "POST /sign-in": lambda t, c: {
        "data": {
            "name": f"nobody-{uuid.uuid4().hex[:6]}",
            "password": "wrong",
            "csrf_token": c.csrf or "",
        }
    },
}


# Path variables naming someone's things.
OWNED = {"conversation_id", "turn_id", "token_id", "upload_id"}


def path_values(things: Things, caller: Caller) -> dict[str, Callable[[], str]]:
    """Return, for each path variable, how to make the value a caller's request names."""
    return {
        "conversation_id": lambda: things.conversation(caller.owner),
        "turn_id": lambda: things.turn(caller.owner),
        "token_id": lambda: things.token(caller.owner),
        "upload_id": lambda: things.upload(caller.owner),
        "provider_id": things.provider,
        "server_name": things.mcp_server,
        "user_id": things.account,
        "plugin_id": lambda: "turn_plugins",
        "name": lambda: "switchable",
        "filename": lambda: "chat.js",
    }


@dataclass
class World:
    """The app under test, its callers by column name, and the maker of things."""

    app: object
    callers: dict[str, Caller]
    things: Things
    people: dict[str, User]

    def sign_in_again(self) -> None:
        """Give the signed-in callers new sessions, after a request that ended their old ones."""
        alice = self.people["alice"].id
        self.callers["user"] = session_caller(self.app, "user", self.people["alice"])
        self.callers["other"] = session_caller(self.app, "other", self.people["olga"], alice)
        self.callers["admin"] = session_caller(self.app, "admin", self.people["ada"], alice)


ACCOUNTS = [("alice", False), ("olga", False), ("ada", True), ("dora", False), ("carol", False)]
# Rows whose request ends every session of the caller's account: the callers sign in again.
ENDS_SESSIONS = {"POST /sign-out", "POST /settings/password", "POST /settings/sign-out-everywhere"}


@pytest.fixture(scope="module")
def world(tmp_path_factory, redis_url, sqlite_template):
    """An app with the turn test plugins, a worker, a fake model, and one caller per column."""
    path = tmp_path_factory.mktemp("matrix") / "lookout.db"
    shutil.copyfile(sqlite_template, path)
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "matrix-tests",
            "DATABASE_URL": f"sqlite:///{path}",
            "REDIS_URL": redis_url,
            "CELERY_QUEUE": f"lookout-matrix-{RUN_ID}-{uuid.uuid4().hex[:8]}",
            "LOOKOUT_PLUGINS": "tests.workers.turn_plugins,tools.web_search",
            "METRICS_TOKEN": METRICS_TOKEN,
            # The matrix asks who may start a turn, not how many: the quotas have their own tests.
            "QUOTA_OPEN_TURNS": 1000,
            "QUOTA_TURNS_PER_HOUR": 10000,
        }
    )
    with FakeModel() as fake:
        with app.app_context():
            people = {}
            for name, admin in ACCOUNTS:
                people[name] = User.make(name, "password", admin=admin)
                db.session.add(people[name])
            db.session.add(Provider(name="matrix", base_url=fake.base_url, models=[{"name": "m"}]))
            db.session.commit()
            for person in people.values():
                db.session.refresh(person)
                db.session.expunge(person)
        alice = people["alice"].id
        callers = {
            "anon": anonymous_caller(app, alice),
            "user": session_caller(app, "user", people["alice"]),
            "other": session_caller(app, "other", people["olga"], owner=alice),
            "admin": session_caller(app, "admin", people["ada"], owner=alice),
            "token": token_caller(app, "token", people["alice"]),
            "revoked": token_caller(app, "revoked", people["alice"], revoked=True),
            "disabled": session_caller(app, "disabled", people["dora"]),
            "disabled token": token_caller(app, "disabled token", people["dora"]),
            "ended": ended_session_caller(app, "ended", people["carol"]),
        }
        with app.app_context():
            db.session.get(User, people["dora"].id).disabled = True
            db.session.commit()
        with CeleryWorker(app, tmp_path_factory.mktemp("matrix-worker"), concurrency=2):
            yield World(app, callers, Things(app, fake.base_url), people)
    with app.app_context():
        db.engine.dispose()


@pytest.fixture(autouse=True)
def no_open_turns_left(world):
    """End the open turns a test made, whatever it did with them."""
    yield
    world.things.end_open_turns()


def prepare(world: World, row: Row, caller: Caller, missing: bool = False) -> tuple[str, dict]:
    """Make the new things the row's request names; return its path and its other arguments.

    With ``missing``, the path names a conversation, turn or token that does not exist.
    """
    request = REQUESTS.get(row.key, lambda t, c: {})(world.things, caller)
    values = request.pop("values", {})
    makers = path_values(world.things, caller)
    path = row.rule
    for converter, name in variables_of(row.rule):
        if missing and name in OWNED:
            value = uuid.uuid4().hex
        else:
            value = values[name] if name in values else makers[name]()
        path = path.replace(f"<{converter}{name}>", value)
    return path, request


def send(world: World, row: Row, caller: Caller, path: str, request: dict):
    """Send a prepared request as the caller; return the response, read to its end."""
    with caller.client(world.app).open(path, method=row.method, **request) as response:
        response.get_data()
        return response


def call(world: World, row: Row, caller: Caller):
    """Send the row's request as the caller, naming new things; return the response."""
    return send(world, row, caller, *prepare(world, row, caller))


def variables_of(rule: str) -> list[tuple[str, str]]:
    """Return the (converter prefix, name) of each ``<...>`` of a rule, as written in it."""
    found = []
    for part in rule.split("<")[1:]:
        inside = part.split(">")[0]
        converter, _, name = inside.rpartition(":")
        found.append((f"{converter}:" if converter else "", name))
    return found


def routes_of(app) -> set[str]:
    """Return "METHOD rule" for every route of the app (HEAD and OPTIONS come with GET)."""
    return {
        f"{method} {rule.rule}"
        for rule in app.url_map.iter_rules()
        for method in rule.methods - {"HEAD", "OPTIONS"}
    }


def test_every_route_has_a_row(world):
    routes = routes_of(world.app)
    rows = {f"{row.method} {row.rule}" for row in ROWS}
    missing = sorted(routes - rows)
    assert not missing, (
        "These routes have no row in the authorization matrix: "
        + "; ".join(missing)
        + ". Add a row for each to MATRIX in tests/webapp/test_authorization_matrix.py, "
        "with the status every caller should get."
    )
    gone = sorted(rows - routes)
    assert not gone, f"These rows name no route of the app: {'; '.join(gone)}. Remove them."


SIGNED_OUT = ("anon", "revoked", "disabled", "disabled token", "ended")


def misread(row: Row, column: str, response, expected: int) -> str | None:
    """Return what is wrong with a caller's response to a row, or None when it is as expected.

    Beyond the status: an API error has the one JSON error shape, and a page that sends a
    caller without a live account away sends them to the sign-in page.
    """
    if response.status_code != expected:
        return f"{column} got {response.status_code}, the matrix says {expected}"
    if response.status_code >= 400 and row.rule.startswith("/api/"):
        error = (response.get_json(silent=True) or {}).get("error") or {}
        if not error.get("message") or not isinstance(error.get("fields"), dict):
            return f"{column} got an error without the JSON error shape: {response.data[:200]!r}"
    if response.status_code == 302 and column in SIGNED_OUT:
        if not response.headers["Location"].startswith("/sign-in"):
            return f"{column} was sent to {response.headers['Location']}, not to sign in"
    return None


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.key)
def test_each_caller_gets_the_status_the_matrix_says(world, row):
    wrong = []
    for column in CALLERS:
        response = call(world, row, world.callers[column])
        wrong.append(misread(row, column, response, row.expected[column]))
    # A disabled account's token is answered as a revoked one is.
    revoked = row.expected["revoked"]
    response = call(world, row, world.callers["disabled token"])
    wrong.append(misread(row, "disabled token", response, revoked))
    if row.key in ENDS_SESSIONS:
        world.sign_in_again()
    wrong = [sentence for sentence in wrong if sentence]
    assert not wrong, f"{row.key}: " + "; ".join(wrong)


def row_counts(world: World) -> dict[str, int]:
    """Return the number of rows of every table."""
    with world.app.app_context():
        return {
            table.name: db.session.scalar(db.select(db.func.count()).select_from(table))
            for table in db.metadata.sorted_tables
        }


@pytest.mark.parametrize(
    "row", [row for row in ROWS if row.method in UNSAFE], ids=lambda row: row.key
)
def test_a_session_without_its_csrf_token_is_refused(world, row):
    for column in ("user", "admin"):
        caller = replace(world.callers[column], csrf=None)
        path, request = prepare(world, row, caller)
        before = row_counts(world)
        response = send(world, row, caller, path, request)
        assert response.status_code == 400, f"{row.key} as {column}: {response.status_code}"
        assert CSRF_REFUSED in html.unescape(response.get_data(as_text=True))
        assert row_counts(world) == before, f"{row.key} as {column} changed what is stored"


def test_a_made_up_token_beside_a_session_does_not_skip_its_csrf_check(world):
    """Bearer requests skip the CSRF check, so a bearer header must never borrow a session."""
    caller = replace(world.callers["user"], csrf=None, token="made-up")
    row = Row("POST", "/api/conversations", "", {})
    before = row_counts(world)
    response = call(world, row, caller)
    assert response.status_code == 401
    assert row_counts(world) == before


@pytest.mark.parametrize(
    "row", [row for row in ROWS if row.expected["other"] == 404], ids=lambda row: row.key
)
def test_someone_elses_thing_is_answered_as_a_missing_one(world, row):
    """The 404 for another user's thing is word for word the 404 for an id that names nothing.

    Regression: another user's turn answered "There is no such conversation." where a made-up
    id answered "There is no such turn.", telling that the turn existed.
    """
    theirs = call(world, row, world.callers["other"])
    caller = world.callers["other"]
    missing = send(world, row, caller, *prepare(world, row, caller, missing=True))
    assert (missing.status_code, missing.get_json()) == (theirs.status_code, theirs.get_json())


def test_the_api_description_lists_every_status_the_matrix_sees(world):
    """A tool reading /api/openapi.json learns every answer a caller of the matrix gets."""
    spec = call(world, Row("GET", "/api/openapi.json", "", {}), world.callers["user"]).get_json()
    unlisted = []
    for row in ROWS:
        if not row.rule.startswith(("/api/", "/v1/")):
            continue
        operation = spec["paths"][openapi_path(row.rule)][row.method.lower()]
        for column, status in row.expected.items():
            if str(status) not in operation["responses"]:
                unlisted.append(f"{row.key} answers {column} {status}")
        if row.expected["anon"] == 401 and "security" not in operation:
            unlisted.append(f"{row.key} needs an account but names no security")
    assert not unlisted, "The API description leaves out: " + "; ".join(unlisted)
