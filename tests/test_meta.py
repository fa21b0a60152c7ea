"""Meta-tests: everything registered is described, has a valid schema, and is tested."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.host import PluginHost

ROOT = Path(__file__).resolve().parents[1]
BUILT_IN = ["tools.web_search", "tools.web_fetch", "tools.pdf", "examples.word_count"]
OPTIONS = {"web_search": {"engine": "duckduckgo"}}


def built_in_tools():
    host = PluginHost(BUILT_IN, "Lookout", "http://localhost:5000").load(OPTIONS)
    assert {s.status for s in host.plugins.values()} == {"active"}, host.plugins
    return host.tools()


@pytest.mark.parametrize("tool", built_in_tools(), ids=lambda t: t.name)
def test_every_registered_tool_is_described_schema_valid_and_tested(tool):
    assert len(tool.description) > 20
    schema = tool.json_schema()
    assert schema["type"] == "object" and schema["properties"]
    assert set(schema.get("required", [])) <= set(schema["properties"])
    assert tool.timeout_seconds > 0
    tests = [
        p
        for p in (ROOT / "tests").rglob("test_*.py")
        if f'"{tool.name}"' in p.read_text(encoding="utf-8") and p.name != "test_meta.py"
    ]
    assert tests, f"no test names the tool {tool.name}"
