"""Listeners a host adds to hear what happens inside tools, such as a refused fetch or a failed
search, without tools importing the host (the app counts them for /metrics)."""

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
