"""Following a turn for one HTTP request: its events until it ends, and whether the client left.

The turn's events are read from its Redis stream as ``GET /api/turns/<id>/events`` reads them
(``TurnState.read``), waking at least every ``POLL_MS`` so that the caller can check that its
client is still there: a streamed answer by writing to it, a whole one by ``client_gone``.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

from flask import Flask

from core.extensions import db
from core.models import Message, Turn
from core.turn.events import TERMINAL_EVENTS, ending_event
from core.turn.lifecycle import OPEN_STATUSES, cancel_turn
from core.turn.state import TurnState
from webapp import queue

POLL_MS = 1000
Event = tuple[str, dict[str, Any]]


def stored_ending(app: Flask, turn_id: str) -> Event | None:
    """Return the ending event of a turn that has ended (as stored), None while it is open."""
    with app.app_context():
        row = db.session.execute(db.select(Turn.status, Turn.error).filter_by(id=turn_id)).first()
    if row is None or row.status in OPEN_STATUSES:
        return None
    return ending_event(row.status), ({"error": row.error} if row.error else {})


def follow_turn(app: Flask, state: TurnState) -> Iterator[Event | None]:
    """Yield the turn's events as (name, data) up to and with its ending, and None after each
    ``POLL_MS`` without one. Raises ``redis.RedisError`` when Redis cannot be read."""
    last = "0"
    while True:
        events = state.read(after=last, block_ms=POLL_MS)
        for entry_id, name, data in events:
            last = entry_id
            yield name, data
            if name in TERMINAL_EVENTS:
                return
        if not events:
            ending = stored_ending(app, state.turn_id)
            if ending is not None:  # ended, and its stream expired (or lost its end)
                yield ending
                return
            yield None


def read_ended(app: Flask, turn_id: str) -> tuple[Turn, list[dict[str, Any]]]:
    """Return the stored turn and its reply's parts (none when it never started one)."""
    with app.app_context():
        turn = db.session.get(Turn, turn_id)
        message = db.session.get(Message, turn.assistant_message_id or "")
        parts = list(message.parts) if message is not None else []
        db.session.expunge(turn)
    return turn, parts


def stop_turn(app: Flask, turn_id: str) -> None:
    """Cancel the turn when it is still open: its client went away."""
    with app.app_context():
        turn = db.session.get(Turn, turn_id)
        if turn is not None and turn.status in OPEN_STATUSES:
            cancel_turn(turn, revoke=queue.revoke)


def client_gone(environ: dict[str, Any]) -> bool:
    """Return whether the client closed its connection (it reads as ended, with nothing
    waiting); False when the server does not expose the socket."""
    sock = environ.get("werkzeug.socket") or environ.get("gunicorn.socket")
    if sock is None:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True
