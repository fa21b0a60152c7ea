"""The MCP servers these tests talk to: mcp-server-time over stdio, the test server on loopback.

(Not named `mcp`: pytest puts tests/tools on the path, where that would hide the SDK.)
"""

from __future__ import annotations

import sys

import pytest

from tests.support.mcp_server import MCPTestServer
from tools.mcp import ServerSpec

# The address policy of a test that treats the loopback server as public.
LOOPBACK_IS_PUBLIC = staticmethod(lambda address: address in ("127.0.0.1", "::1"))

TIME_SERVER = ServerSpec(
    name="time", command=(sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC")
)


@pytest.fixture(scope="module")
def test_server(tmp_path_factory):
    """The SDK-written test server, running for the module."""
    with MCPTestServer(tmp_path_factory.mktemp("mcp")) as server:
        yield server
