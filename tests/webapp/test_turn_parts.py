"""Message parts: built in DESIGN.md's shapes by one module."""

from __future__ import annotations

import ast
from pathlib import Path

from core.turn import parts as turn_parts
from core.turn.parts import (
    attachment_part,
    source_part,
    text_part,
    tool_call_part,
    tool_result_part,
)

ROOT = Path(__file__).resolve().parents[2]
PARTS_MODULE = ROOT / "webapp" / "turn" / "parts.py"
KINDS = {"text", "tool-call", "tool-result", "source", "attachment"}


def test_each_part_is_stored_in_the_shape_design_md_draws():
    # Key order too: SQLite keeps the JSON text as it was written.
    assert [
        list(p.items())
        for p in [
            text_part("Hello"),
            tool_call_part("c1", "web_fetch", {"url": "https://a.example/"}),
            tool_result_part("c1", "web_fetch", "ok", {"text": "hi"}, None),
            tool_result_part("c2", "web_fetch", "timeout", None, "Too slow."),
            source_part("https://a.example/", "A"),
            attachment_part("u1", "notes.txt", "text/plain"),
        ]
    ] == [
        [("type", "text"), ("text", "Hello")],
        [
            ("type", "tool-call"),
            ("id", "c1"),
            ("name", "web_fetch"),
            ("input", {"url": "https://a.example/"}),
        ],
        [
            ("type", "tool-result"),
            ("callId", "c1"),
            ("name", "web_fetch"),
            ("output", {"text": "hi"}),
            ("outcome", "ok"),
        ],
        [
            ("type", "tool-result"),
            ("callId", "c2"),
            ("name", "web_fetch"),
            ("error", "Too slow."),
            ("outcome", "timeout"),
        ],
        [("type", "source"), ("url", "https://a.example/"), ("title", "A")],
        # A reference to its upload, whose text is kept once (issue 24); the docs lead
        # where DESIGN.md drew a copy of the text.
        [
            ("type", "attachment"),
            ("uploadId", "u1"),
            ("filename", "notes.txt"),
            ("mimeType", "text/plain"),
        ],
    ]


def test_no_other_module_builds_or_reads_a_part_by_its_type_key():
    offences = []
    for package in ("webapp", "workers"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == PARTS_MODULE:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Dict):
                    pairs = zip(node.keys, node.values, strict=True)
                    if any(
                        isinstance(k, ast.Constant)
                        and k.value == "type"
                        and isinstance(v, ast.Constant)
                        and v.value in KINDS
                        for k, v in pairs
                    ):
                        offences.append(f"{path.relative_to(ROOT)}:{node.lineno} builds a part")
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "get"
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and node.args[0].value == "type"
                ):
                    offences.append(f"{path.relative_to(ROOT)}:{node.lineno} reads a part's type")
    assert offences == []


def test_the_part_types_are_the_five_design_md_names():
    assert {
        turn_parts.TEXT,
        turn_parts.TOOL_CALL,
        turn_parts.TOOL_RESULT,
        turn_parts.SOURCE,
        turn_parts.ATTACHMENT,
    } == KINDS
