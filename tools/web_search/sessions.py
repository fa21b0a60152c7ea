"""The HTTP session of one search with the admin's engine: its own, and stoppable at any moment.

The admin's engine is trusted (the spec: admin URLs use plain fetch), so any address is
allowed; what the session adds to a plain one is that ``abort`` shuts its connections down from
another thread, which wakes a request still waiting for the engine's response headers. A new
session is made for each search, so cookies an engine sets for one user's search are never
sent with another's.
"""

from __future__ import annotations

import requests

from tools.net import GuardedAdapter


def _any_address(address: str) -> bool:
    return True


class SearchSession(requests.Session):
    """A plain session (no proxies or netrc from the environment) that ``abort`` can stop."""

    def __init__(self) -> None:
        super().__init__()
        self.trust_env = False
        self._adapters = [GuardedAdapter(_any_address), GuardedAdapter(_any_address)]
        self.mount("http://", self._adapters[0])
        self.mount("https://", self._adapters[1])

    def abort(self) -> None:
        """Shut every connection of this session down and refuse new ones, from any thread."""
        for adapter in self._adapters:
            adapter.guard.abort()
