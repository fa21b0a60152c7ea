"""bench.load_users: a load's users spread over client processes, every turn gathered back."""

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bench.load_users import run_users


class FakeApi(BaseHTTPRequestHandler):
    """Lookout's three calls of a turn, each answered at once; counts the turns by token."""

    started: Counter = Counter()
    lock = threading.Lock()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/api/conversations":
            self.answer(201, "application/json", json.dumps({"id": "c"}))
            return
        with self.lock:
            self.started[self.headers["Authorization"]] += 1
        self.answer(202, "application/json", json.dumps({"turn": {"id": "t"}}))

    def do_GET(self) -> None:
        self.answer(200, "text/event-stream", "event: turn.completed\ndata: {}\n\n")

    def answer(self, status: int, kind: str, body: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def api():
    FakeApi.started = Counter()
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def job_for(base_url: str, users: int, seconds: float) -> dict:
    start = time.monotonic()
    return {
        "users": [[base_url, f"token-{i}", start] for i in range(users)],
        "model": "tooly",
        "stop_at": start + seconds,
        "think": 0.05,
        "answer_seconds": 0.0,
    }


@pytest.mark.parametrize("processes", [1, 2])
def test_every_user_s_turns_come_back_in_the_user_s_place(api, processes):
    """Users spread over two client processes each give back every turn they started, in the
    order they were given, with the CPU the other processes used."""
    results, cpu = run_users(job_for(api, 5, 1.5), processes)
    assert len(results) == 5
    for i, turns in enumerate(results):
        assert turns, f"user {i} gave back no turn"
        assert all("error" not in turn for turn in turns), turns
        assert len(turns) == FakeApi.started[f"Bearer token-{i}"]
    assert (cpu > 0) == (processes > 1)  # in process, the caller reads its own CPU
