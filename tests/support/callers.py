"""The callers of the authorization matrix and the fresh things each of its requests acts on.

A `Caller` is how a request presents itself: a browser session (its cookie and CSRF token), an
API token, or nothing. `Things` stores, straight in the database, a new conversation, turn,
token, upload or provider for each request, so that no request sees what another one changed
(a deleted conversation, a revoked token, a cancelled turn).
"""

from __future__ import annotations

import io
import uuid
from dataclasses import dataclass, field

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import update

from core.extensions import db
from core.models import (
    ApiToken,
    Conversation,
    McpServer,
    Message,
    Provider,
    Turn,
    Upload,
    User,
)
from core.models.base import utcnow
from tests.support.accounts import csrf_token_from, sign_in


@dataclass
class Caller:
    """One way of calling: a session cookie with its CSRF token, or a bearer token, or neither.

    ``owner`` is the id of the user whose things the caller's requests name.
    """

    name: str
    owner: str
    cookie: str | None = None
    csrf: str | None = None
    token: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def client(self, app: Flask) -> FlaskClient:
        """Return a new test client that presents this caller."""
        client = app.test_client()
        if self.cookie is not None:
            client.set_cookie(app.config.get("SESSION_COOKIE_NAME", "session"), self.cookie)
        if self.csrf is not None:
            client.environ_base["HTTP_X_CSRFTOKEN"] = self.csrf
        if self.token is not None:
            client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {self.token}"
        return client


def session_of(client: FlaskClient, app: Flask) -> str:
    """Return the value of the client's session cookie."""
    cookie = client.get_cookie(app.config.get("SESSION_COOKIE_NAME", "session"))
    assert cookie is not None, "The app set no session cookie."
    return cookie.value


def anonymous_caller(app: Flask, owner: str) -> Caller:
    """Return a browser that opened the sign-in page (so it holds a CSRF token), not signed in."""
    client = app.test_client()
    csrf = csrf_token_from(client.get("/sign-in").get_data(as_text=True))
    return Caller("anon", owner, cookie=session_of(client, app), csrf=csrf)


def session_caller(app: Flask, name: str, user: User, owner: str | None = None) -> Caller:
    """Return the browser session of ``user`` (password "password"), signed in through the form."""
    client = app.test_client()
    response = sign_in(client, user.name, "password")
    assert response.status_code == 302, response.get_data(as_text=True)
    csrf = csrf_token_from(client.get("/").get_data(as_text=True))
    return Caller(name, owner or user.id, cookie=session_of(client, app), csrf=csrf)


def ended_session_caller(app: Flask, name: str, user: User) -> Caller:
    """Return a copy of ``user``'s session cookie kept from before they signed out."""
    caller = session_caller(app, name, user)
    response = caller.client(app).post("/sign-out")
    assert response.status_code == 302, response.get_data(as_text=True)
    return caller


def token_caller(app: Flask, name: str, user: User, revoked: bool = False) -> Caller:
    """Return a caller with a new API token of ``user``; ``revoked`` deletes the token first."""
    with app.app_context():
        row, token = ApiToken.make(db.session.get(User, user.id), f"matrix-{name}")
        db.session.add(row)
        db.session.commit()
        if revoked:
            db.session.delete(row)
            db.session.commit()
    return Caller(name, user.id, token=token)


class Things:
    """Makes a new thing of a user's for each request, and answers with its id."""

    def __init__(self, app: Flask, model_base_url: str):
        self.app = app
        self.model_base_url = model_base_url
        self.open_turns: list[str] = []

    def conversation(self, owner: str) -> str:
        """Return a new conversation of ``owner`` holding one user message."""
        return self._conversation(owner)[0]

    def _conversation(self, owner: str) -> tuple[str, str]:
        with self.app.app_context():
            conversation = Conversation(owner_id=owner, title="Matrix")
            db.session.add(conversation)
            db.session.flush()
            message = Message(
                conversation_id=conversation.id,
                role="user",
                parts=[{"type": "text", "text": "Hello"}],
                status="completed",
            )
            db.session.add(message)
            db.session.commit()
            return conversation.id, message.id

    def stopped_reply(self, owner: str) -> str:
        """Return the id of the reply of a new conversation of ``owner``, which a Stop ended
        with some text written."""
        conversation_id, asked = self._conversation(owner)
        with self.app.app_context():
            reply = Message(
                conversation_id=conversation_id,
                parent_id=asked,
                role="assistant",
                parts=[{"type": "text", "text": "Half of"}],
                status="cancelled",
            )
            db.session.add(reply)
            db.session.flush()
            db.session.add(
                Turn(
                    conversation_id=conversation_id,
                    user_message_id=asked,
                    assistant_message_id=reply.id,
                    model="matrix/m",
                    status="cancelled",
                    finished_at=utcnow(),
                )
            )
            db.session.commit()
            return reply.id

    def account(self) -> str:
        """Return a new account of nobody's (for the admins' accounts API to change)."""
        with self.app.app_context():
            user = User.make(f"someone-{uuid.uuid4().hex[:8]}", "password")
            db.session.add(user)
            db.session.commit()
            return user.id

    def turn(self, owner: str, status: str = "completed") -> str:
        """Return a new turn of ``owner``: ended (its event stream long gone), or still open."""
        conversation_id, message_id = self._conversation(owner)
        with self.app.app_context():
            turn = Turn(
                conversation_id=conversation_id,
                user_message_id=message_id,
                model="matrix/m",
                status=status,
                finished_at=None if status in ("queued", "running") else utcnow(),
            )
            db.session.add(turn)
            db.session.commit()
            if status in ("queued", "running"):
                self.open_turns.append(turn.id)
            return turn.id

    def end_open_turns(self) -> None:
        """Cancel the open turns made here that no request ended, so none counts against a
        user's open turns later (nor is sent to the worker by the reaper)."""
        with self.app.app_context():
            db.session.execute(
                update(Turn)
                .where(Turn.id.in_(self.open_turns), Turn.status.in_(("queued", "running")))
                .values(status="cancelled", finished_at=utcnow())
            )
            db.session.commit()
        self.open_turns.clear()

    def token(self, owner: str) -> str:
        """Return the id of a new API token of ``owner``."""
        with self.app.app_context():
            row, _ = ApiToken.make(db.session.get(User, owner), "matrix")
            db.session.add(row)
            db.session.commit()
            return row.id

    def upload(self, owner: str) -> str:
        """Return the id of a new text upload of ``owner``."""
        with self.app.app_context():
            row = Upload(owner_id=owner, filename="notes.txt", mime_type="text/plain", size=5)
            row.text = "notes"
            db.session.add(row)
            db.session.commit()
            return row.id

    def mcp_server(self, _owner: str = "") -> str:
        """Return the name of a new MCP server (servers are everyone's) that nothing answers."""
        with self.app.app_context():
            row = McpServer(name=f"matrix-{uuid.uuid4().hex[:8]}", url="http://127.0.0.1:9/mcp")
            db.session.add(row)
            db.session.commit()
            return row.name

    def provider(self, _owner: str = "") -> str:
        """Return the id of a new provider (providers are everyone's) on the fake model."""
        with self.app.app_context():
            row = Provider(
                name=f"matrix-{uuid.uuid4().hex[:8]}",
                base_url=self.model_base_url,
                models=[{"name": "m", "tools": True}],
            )
            db.session.add(row)
            db.session.commit()
            return row.id


def text_file(text: str = "Some notes.") -> dict:
    """Return multipart form data carrying a small text file in the field ``file``."""
    return {"file": (io.BytesIO(text.encode()), "notes.txt", "text/plain")}
