"""Listeners a host adds to hear what happens inside tools, such as a refused fetch or a failed
search, without tools importing the host (the app counts them for /metrics).

A failed search is an event of the plugin API rather than of one plugin: any search plugin
reports it with ``report_search_failure`` (exported by ``tools.api``), and the host hears every
plugin's through ``on_search_failure`` without naming any of them."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("lookout.tools.listeners")


class Listeners:
    """The listeners of one kind of event; telling them never raises into the tool."""

    def __init__(self, event: str) -> None:
        self.event = event
        self._listeners: list[Callable[..., None]] = []

    def add(self, listener: Callable[..., None]) -> Callable[[], None]:
        """Call ``listener`` on every event from now on, once however often it is added;
        return a function that removes it."""
        if listener not in self._listeners:
            self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def tell(self, *args: Any) -> None:
        """Call every listener with ``args``; one that fails is logged and the rest still hear."""
        for listener in list(self._listeners):
            try:
                listener(*args)
            except Exception:  # hearing of an event must never turn it into another error
                log.exception("a listener of %s failed", self.event)


# Why an engine failed a search. Plugins report only these words: they label a metric, whose
# values must come from a fixed set.
SEARCH_FAILURE_REASONS = (
    "rate-limited",  # the engine said too many requests (HTTP 429, a used-up daily cap)
    "blocked",  # the engine turned the search away as a bot's (a captcha or block page)
    "down",  # the engine did not answer: no connection, a timeout, HTTP 5xx
    "refused",  # the network guard or a domain list refused the engine's address
    "error",  # anything else: a rejected key, an answer that could not be read
)

_search_failures = Listeners("a failed search")


def on_search_failure(listener: Callable[[str, str], None]) -> Callable[[], None]:
    """Call ``listener(engine, reason)`` whenever a search plugin reports a failed search from
    now on, once however often it is added; return a function that removes it."""
    return _search_failures.add(listener)


def report_search_failure(engine: str, reason: str) -> None:
    """Tell the host that ``engine`` (a short, stable engine id) failed a search, and why: one
    of ``SEARCH_FAILURE_REASONS``. Raises ``ValueError`` for another reason or a blank engine
    id; a failing listener never raises into the plugin."""
    if reason not in SEARCH_FAILURE_REASONS:
        words = ", ".join(SEARCH_FAILURE_REASONS)
        raise ValueError(f"A search failure's reason is one of {words}, not {reason!r}.")
    if not isinstance(engine, str) or not engine.strip():
        raise ValueError("A search failure names the engine that failed, by its id.")
    _search_failures.tell(engine, reason)
