"""Page-reading XPaths stay linear in the page: no ``//name[predicate]`` in ``tools/``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# libxml2 evaluates ``//div[p]`` as a child step from every node, merging as it goes; where
# matches nest, the merging is quadratic in the matches: 40,000 styled spans after a few nested
# styled divs took 14 s to find with ``//*[@style]`` and 0.02 s with ``descendant::*[@style]``.
# A step after ``//`` with a predicate is that shape (``//a/@href[...]`` is not).
QUADRATIC_STEP = re.compile(r"//[\w*:-]+\[")


def string_constants(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_no_xpath_in_tools_filters_a_descendant_step_after_a_double_slash():
    offences = [
        f"{path.relative_to(ROOT)}: {text!r} (write descendant::name[...])"
        for path in sorted((ROOT / "tools").rglob("*.py"))
        for text in string_constants(path)
        if QUADRATIC_STEP.search(text)
    ]

    assert offences == []
