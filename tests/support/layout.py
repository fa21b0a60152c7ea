"""Checking a page's layout in Chromium: what does not fit its viewport, in words."""

from __future__ import annotations

from pathlib import Path

# The script's leading comment goes: Playwright calls only a text that starts as a function.
CHECK = Path(__file__).with_name("layout_faults.js").read_text().split("*/", 1)[1].strip()

# Text elements narrower than this many of their own font's average characters are squeezed.
MIN_CHARACTERS = 8


def layout_faults(page) -> list[str]:
    """Return what breaks the page's layout at its viewport's size: a document wider than the
    screen, a control outside it, text narrower than ``MIN_CHARACTERS`` characters."""
    return page.evaluate(CHECK, MIN_CHARACTERS)
