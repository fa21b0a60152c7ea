"""The INFO log holds Lookout's lines, not a line per HTTP request its libraries make.

Regression: httpx (the openai SDK's client) logs "HTTP Request: POST …" at INFO for every model
call, so a worker at the default LOG_LEVEL wrote a line a model step, and an MCP server's calls
one each, burying the lines an operator reads.
"""

from __future__ import annotations

import logging

import httpx2

from core import config
from tests.support.sites import Site


class Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


def test_a_model_call_writes_no_info_line_but_a_warning_still_shows():
    root = logging.getLogger()
    level = root.level
    config.configure_logging("INFO")
    root.setLevel(logging.INFO)  # as in a worker (under pytest basicConfig leaves it alone)
    lines = Lines()
    root.addHandler(lines)
    try:
        with Site() as site, httpx2.Client() as client:
            site.serve("/v1/models", "application/json", b'{"data": []}')
            assert client.get(site.url("/v1/models")).status_code == 200
        logging.getLogger("httpx2").warning("a library's warning")
    finally:
        root.removeHandler(lines)
        root.setLevel(level)
    assert [(r.name, r.getMessage()) for r in lines.records if r.name.startswith("httpx")] == [
        ("httpx2", "a library's warning")
    ]
