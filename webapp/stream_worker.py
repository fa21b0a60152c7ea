"""The gunicorn worker the web runs in: gunicorn's threaded worker, except that an event stream's
connection goes to the process's stream hub (``webapp/stream_hub.py``) instead of holding a thread.

``./run`` and the tests start gunicorn with ``--worker-class webapp.stream_worker.StreamingWorker``.
Every request runs in a pool thread as under ``gthread``. The events view, once its checks pass,
answers with a body that hands the socket to the hub and raises ``ConnectionClaimed``: this worker
then lets go of the connection without writing or closing anything. Served by anything else (the
Flask test client, werkzeug's server), the view finds no ``CLAIM`` in its environ and serves the
stream from its thread, as before.
"""

from __future__ import annotations

import resource

from gunicorn.workers.gthread import ThreadWorker

CLAIM = "lookout.can_claim_connection"  # in the environ of requests this worker serves
HEAD = "lookout.response_head"  # the status and headers the app started its response with
_CLAIMED = object()


class ConnectionClaimed(BaseException):
    """Raised by a response body whose connection the hub took; gunicorn's ``except Exception``
    clauses must not catch it, since they would write an error on a socket no longer theirs."""


def raise_open_files_limit() -> None:
    """Let the process hold as many sockets as the system allows it (one per open stream)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class StreamingWorker(ThreadWorker):
    """A ``gthread`` worker whose event streams hold no thread."""

    def init_process(self) -> None:
        """Raise the open files limit, then run as gunicorn's threaded worker."""
        raise_open_files_limit()
        super().init_process()

    def load_wsgi(self) -> None:
        """Wrap the app so that a request may claim its connection."""
        super().load_wsgi()
        app = self.wsgi

        def claimable(environ, start_response):
            def recorded(status, headers, exc_info=None):
                environ[HEAD] = (status, headers)
                return start_response(status, headers, exc_info)

            environ[CLAIM] = True
            return app(environ, recorded)

        self.wsgi = claimable

    def handle(self, conn):
        """Serve a request; a claimed connection is the hub's from now on."""
        try:
            return super().handle(conn)
        except ConnectionClaimed:
            return _CLAIMED

    def finish_request(self, conn, fs) -> None:
        """Forget a claimed connection (without closing it); finish others as gunicorn does."""
        if not fs.cancelled() and fs.exception() is None and fs.result() is _CLAIMED:
            self.nr_conns -= 1
            return
        super().finish_request(conn, fs)
