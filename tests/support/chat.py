"""A client of the chat API for end-to-end tests: start turns, read their events, wait for them."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import requests

from tests.support.processes import HANG_SECONDS


@dataclass
class Event:
    """One Server-Sent Event of a turn."""

    id: str | None
    name: str
    data: dict[str, Any]


@dataclass
class ChatClient:
    """Talks to a live server as one user, with a bearer token."""

    base_url: str
    token: str
    session: requests.Session = field(default_factory=requests.Session)

    def __post_init__(self) -> None:
        self.session.headers["Authorization"] = f"Bearer {self.token}"

    def call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """Send a request to the API and return the response."""
        kwargs.setdefault("timeout", 30)
        return self.session.request(method, self.base_url + path, **kwargs)

    def search_with_searxng(self, base_url: str) -> None:
        """As an admin, save SearXNG at ``base_url`` as web_search's engine, on by default."""
        options = {"engine": "searxng", "baseURL": base_url, "enabledByDefault": True}
        saved = self.call("PUT", "/api/admin/plugins/web_search/options", json=options)
        assert saved.status_code == 200, saved.text

    def new_conversation(self) -> str:
        """Create a conversation and return its id."""
        response = self.call("POST", "/api/conversations", json={})
        assert response.status_code == 201, response.text
        return response.json()["id"]

    def start(self, conversation: str, content: str | None, model: str, **extra: Any) -> dict:
        """Start a turn and return the 202 body; AssertionError for any other status."""
        body = {"model": model, **extra}
        if content is not None:
            body["content"] = content
        response = self.call("POST", f"/api/conversations/{conversation}/turns", json=body)
        assert response.status_code == 202, response.text
        return response.json()

    def events(self, turn_id: str, last_event_id: str | None = None, timeout: float = 30):
        """Return the turn's events until the stream ends."""
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        response = self.call(
            "GET", f"/api/turns/{turn_id}/events", headers=headers, stream=True, timeout=timeout
        )
        assert response.status_code == 200, response.text
        return list(parse_sse(response.iter_lines(decode_unicode=True)))

    def turn(self, turn_id: str) -> dict:
        """Return the turn."""
        return self.call("GET", f"/api/turns/{turn_id}").json()

    def wait(self, turn_id: str, timeout: float = HANG_SECONDS) -> dict:
        """Wait until the turn ended and return it (``timeout`` is a bound only a hang reaches)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            turn = self.turn(turn_id)
            if turn["status"] not in ("queued", "running"):
                return turn
            time.sleep(0.05)
        raise AssertionError(f"turn {turn_id} did not end within {timeout} s: {turn}")

    def run(self, conversation: str, content: str | None, model: str, **extra: Any) -> dict:
        """Start a turn, wait for its end and return it."""
        started = self.start(conversation, content, model, **extra)
        return self.wait(started["turn"]["id"])

    def conversation(self, conversation: str) -> dict:
        """Return the conversation with all its messages."""
        return self.call("GET", f"/api/conversations/{conversation}").json()

    def reply(self, turn: dict) -> dict:
        """Return the assistant message a turn wrote."""
        messages = self.conversation(turn["conversationId"])["messages"]
        return next(m for m in messages if m["id"] == turn["assistantMessageId"])


def parse_sse(lines) -> Any:
    """Yield the Events of an SSE body given line by line."""
    event_id, name, data = None, None, []
    for line in lines:
        if line == "":
            if name is not None:
                yield Event(event_id, name, json.loads("\n".join(data) or "{}"))
            event_id, name, data = None, None, []
        elif line.startswith(":"):
            continue
        else:
            key, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if key == "id":
                event_id = value
            elif key == "event":
                name = value
            elif key == "data":
                data.append(value)
