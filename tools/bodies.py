"""Reads response bodies from the web, for pages and search engines alike: bounded and stoppable.

``read_body`` reads at most a number of bytes, stops the moment its budget signal trips (the
socket is shut down, so a body that trickles forever or a blocked read ends at once), and turns
every ``requests``/``urllib3`` failure into ``BodyError`` with a clause for a sentence
(``network_reason``). Decompression happens chunk by chunk, so a gzip or deflate bomb costs no
more than the byte limit. Errors::

    Exception
    ├── tools.api.Cancelled   the budget tripped: the caller's deadline, time limit or cancel
    └── BodyError             the connection failed or broke off; ``reason`` says how
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import requests
import urllib3.exceptions

from tools.api import Signal
from tools.net import interrupt

CHUNK_BYTES = 64 * 1024
# What a read can raise once the response is shut down or breaks: requests and urllib3 errors,
# the socket's own, and AttributeError from http.client reading a file object already closed.
READ_ERRORS = (requests.RequestException, urllib3.exceptions.HTTPError, OSError, AttributeError)


class BodyError(Exception):
    """Reading failed; ``reason`` completes "… failed: <reason>." for the user or the model."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Body:
    """At most the byte limit of a body, and whether more was there (``cut``)."""

    data: bytes
    cut: bool


@contextmanager
def time_budget(signal: Signal, seconds: float) -> Iterator[Signal]:
    """Yield a signal tripping after ``seconds``, at ``signal``'s deadline if sooner, or when
    ``signal`` trips: one time limit for a request and its body. Its timer stops on exit."""
    deadline = time.monotonic() + seconds
    if signal.deadline is not None:
        deadline = min(deadline, signal.deadline)
    budget = Signal(deadline=deadline)
    undo = signal.on_cancel(budget.cancel)
    try:
        yield budget
    finally:
        undo()
        budget.cancel()  # stops the budget's timer thread now rather than at its deadline


def read_body(response: requests.Response, max_bytes: int, budget: Signal) -> Body:
    """Return the body's first ``max_bytes`` bytes (decoded, as sent with gzip or deflate).

    Raises ``Cancelled`` when ``budget`` trips and ``BodyError`` when the connection fails.
    """
    undo = budget.on_cancel(lambda: interrupt(response))
    chunks: list[bytes] = []
    total = 0
    try:
        for chunk in response.iter_content(CHUNK_BYTES):
            budget.raise_if_cancelled()
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                return Body(b"".join(chunks)[:max_bytes], cut=True)
    except READ_ERRORS as exc:
        budget.raise_if_cancelled()  # a shut-down socket breaks the read: report the stop
        raise BodyError(network_reason(exc)) from exc
    finally:
        undo()
    budget.raise_if_cancelled()  # a stop may end a body early without an error
    return Body(b"".join(chunks), cut=False)


def network_reason(exc: BaseException) -> str:
    """Return how a request failed, as a clause: "its host name could not be found", …"""
    text = repr(exc)
    if "NameResolutionError" in text or "gaierror" in text or isinstance(exc, socket.gaierror):
        return "its host name could not be found"
    if isinstance(exc, requests.exceptions.SSLError):
        return "the site's TLS certificate could not be verified"
    if isinstance(exc, requests.exceptions.ContentDecodingError | urllib3.exceptions.DecodeError):
        return "the site sent a body that could not be decompressed"
    if isinstance(exc, requests.Timeout | urllib3.exceptions.TimeoutError):
        return "the site did not answer in time"
    if "NewConnectionError" in text or isinstance(exc, ConnectionRefusedError):
        return "the site could not be reached"
    return "the connection broke off"


__all__ = ["READ_ERRORS", "Body", "BodyError", "network_reason", "read_body", "time_budget"]
