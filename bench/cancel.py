"""Cancellation latency: from the cancel request to the end of the turn's event stream.

Run from the project root: ``.venv/bin/python -m bench.cancel [--turns 30]``.

Each turn's model asks for the ``download`` tool, which reads a loopback server's endless slow
body (1 KiB every 50 ms). Once the body is flowing, the benchmark posts
``/api/turns/<id>/cancel`` and times three things from just before that request: its answer,
the end of the SSE stream (``turn.cancelled``; the target), and the moment the download server
sees its connection closed (the tool really stopping, which the worker's cancel watcher drives).
"""

from __future__ import annotations

import argparse
import json
import select
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from bench.harness import EventReader, FakeModelProcess, Stack, machine, summary, table
from tests.support.chat import ChatClient

CHUNK = b"x" * 1024
CHUNK_SECONDS = 0.05
BODY_LIMIT_SECONDS = 60  # a body nobody cancelled still ends


class EndlessBody(BaseHTTPRequestHandler):
    """Sends 1 KiB every 50 ms until the client closes; notes when the flow started and ended."""

    protocol_version = "HTTP/1.0"

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        server: EndlessServer = self.server  # type: ignore[assignment]
        number = server.count()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()
        deadline = time.monotonic() + BODY_LIMIT_SECONDS
        try:
            while time.monotonic() < deadline and not server.stopping.is_set():
                self.wfile.write(CHUNK)
                self.wfile.flush()
                server.note(number, "flowing")
                readable, _, _ = select.select([self.connection], [], [], CHUNK_SECONDS)
                if readable and not self.connection.recv(1024):
                    break  # the client closed its end
        except OSError:
            pass
        server.note(number, "closed")

    def log_message(self, *args: object) -> None:
        pass


class EndlessServer(ThreadingHTTPServer):
    """The loopback server of endless bodies; connections are numbered from 0 as they come."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), EndlessBody)
        self.stopping = threading.Event()
        self.times: dict[tuple[int, str], float] = {}
        self.changed = threading.Condition()
        self.connections = 0

    def count(self) -> int:
        """Return the number of a new connection."""
        with self.changed:
            self.connections += 1
            return self.connections - 1

    def note(self, number: int, what: str) -> None:
        """Record the first time ``what`` happened on connection ``number``."""
        with self.changed:
            self.times.setdefault((number, what), time.perf_counter())
            self.changed.notify_all()

    def wait(self, number: int, what: str, timeout: float = 30) -> float:
        """Wait until ``what`` happened on connection ``number``; return when it did."""
        with self.changed:
            if not self.changed.wait_for(lambda: (number, what) in self.times, timeout):
                raise AssertionError(f"connection {number} never {what}")
            return self.times[(number, what)]


def cancel_one(chat: ChatClient, model: str, server: EndlessServer, index: int) -> list[float]:
    """Run turn ``index`` (its download is connection ``index``), cancel it mid-download, and
    return the three latencies in ms."""
    started = chat.start(
        chat.new_conversation(), "download", model, generation={"tools": ["download"]}
    )
    reader = EventReader(chat, started["turn"]["id"])
    reader.start()
    reader.wait_for("tool.started")
    server.wait(index, "flowing")
    time.sleep(0.2)  # well inside the body: several chunks read, the next one awaited
    asked = time.perf_counter()
    response = chat.call("POST", f"/api/turns/{started['turn']['id']}/cancel")
    answered = time.perf_counter()
    assert response.status_code == 200, response.text
    reader.join(30)
    assert reader.names()[-1] == "turn.cancelled", reader.names()
    closed = server.wait(index, "closed", timeout=30)
    return [(answered - asked) * 1000, (reader.ended_at - asked) * 1000, (closed - asked) * 1000]


def run(turns: int, warmup: int, database: str) -> str:
    """Cancel ``turns`` turns one after another and return the Markdown report."""
    server = EndlessServer()
    serve = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    serve.daemon = True
    serve.start()
    latencies: list[list[float]] = []
    try:
        arguments = json.dumps({"url": f"http://127.0.0.1:{server.server_address[1]}/endless/"})
        with Stack(database=database) as stack:
            with FakeModelProcess("tool", "--tool", "download", "--arguments", arguments) as fake:
                model = stack.add_provider(fake.base_url)
                chat = stack.chat()
                for index in range(warmup + turns):
                    measured = cancel_one(chat, model, server, index)
                    if index >= warmup:
                        latencies.append(measured)
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()
    labels = [
        "cancel request answered",
        "SSE stream ended (turn.cancelled)",
        "download connection closed by the tool",
    ]
    rows = [[label, *summary([m[i] for m in latencies])] for i, label in enumerate(labels)]
    return "\n".join(
        [
            f"Cancellation latency from the cancel request, {turns} turns, database "
            f"{database}; {machine()}",
            "",
            table(["measured until", "p50 ms", "p95 ms"], rows),
        ]
    )


def main() -> None:
    """Parse the flags, run, print the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=30, help="timed turns")
    parser.add_argument("--warmup", type=int, default=2, help="untimed turns first")
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    args = parser.parse_args()
    print(run(args.turns, args.warmup, args.database))


if __name__ == "__main__":
    main()
