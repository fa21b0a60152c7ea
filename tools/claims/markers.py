"""Where an answer cites: its ``[n]`` markers outside code, and the sentence each one closes.

Grammar: ``[`` numbers ``]``, where numbers are one to twenty whole numbers of at most nine
digits separated by commas or semicolons (``[1, 2]``), or a range ``[1-3]`` (a hyphen or dash;
at most 10 numbers, first below last); markers may follow each other (``[1][2]``). Not a marker:
one inside a fenced code block or an inline code span, one followed by ``(`` (a Markdown link)
or by ``:`` (a link definition).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

MAX_RANGE = 10
MARKER = re.compile(
    r"\[(?P<body>\d{1,9}(?:[ \t]{0,3}[,;][ \t]{0,3}\d{1,9}){0,19}"
    r"|(?P<first>\d{1,9})[ \t]{0,3}[-–—][ \t]{0,3}(?P<last>\d{1,9}))\](?![(:])"
)
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})", re.MULTILINE)
_TICKS = re.compile(r"`+")
_ABBREVIATIONS = (
    "mr mrs ms dr prof st mt jr sr vs etc fig approx inc ltd co corp dept est gen gov"
    " jan feb mar apr jun jul aug sep sept oct nov dec"
).split()
# A sentence ends at . ! ? (with closing quotes and its markers) before a space and a word not in
# lower case, unless the stop ends an initial (J. Smith, e.g.) or a short form (Dr. Smith); or at
# a line break before a blank line or a Markdown block (a list item, heading, quote, table row,
# code fence): a line break inside a paragraph is a soft wrap. The regexes open with the
# character they look for, so the engine skips ahead to it; the short forms are looked behind
# in one alternation per length (a look-behind has a fixed width), not one look-behind each:
# each stop of a page was tried against every short form in turn.
_BY_LENGTH = sorted({len(word) for word in _ABBREVIATIONS})
_STOP = re.compile(
    r"[.!?](?<![.!?][.!?])(?<!\b[A-Za-z]\.)"
    + "".join(
        rf"(?<!\b(?i:{'|'.join(w for w in _ABBREVIATIONS if len(w) == size)})\.)"
        for size in _BY_LENGTH
    )
    + r"[.!?]*[\"'”’)\]]*(?:\[[\d ,;\-–—]{1,200}\])*(?=\s+[^\sa-z]|\s*\Z)"
)
# Two passes, not one alternation: each regex then skips ahead to its first character.
_BREAK = re.compile(r"\n(?:(?=[ \t]*(?:\n|[#>|*+\-`~]|\d{1,9}[.)][ \t]|\Z))|(?<=```\n)|(?<=~~~\n))")


@dataclass(frozen=True)
class Marker:
    """One ``[...]`` marker: its offsets and the source numbers it names."""

    start: int
    end: int
    numbers: tuple[int, ...]


def code_spans(text: str) -> list[tuple[int, int]]:
    """Return the offsets of fenced code blocks and inline code spans, in order."""
    spans: list[tuple[int, int]] = []
    fence: re.Match[str] | None = None
    for match in _FENCE.finditer(text):
        if fence is None:
            fence = match
        elif match.group(1)[0] == fence.group(1)[0] and len(match.group(1)) >= len(fence.group(1)):
            line_end = text.find("\n", match.end())
            spans.append((fence.start(), len(text) if line_end < 0 else line_end))
            fence = None
    if fence is not None:  # an unclosed fence runs to the end, as CommonMark reads it
        spans.append((fence.start(), len(text)))
    spans += _inline_code(text, spans)
    spans.sort()
    return spans


def _inline_code(text: str, blocks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A run of n backticks opens a span closed by the next run of exactly n (linear time)."""
    runs = [m.span() for m in _TICKS.finditer(text) if not _inside(m.start(), blocks)]
    next_same: list[int | None] = [None] * len(runs)
    last_seen: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        size = runs[index][1] - runs[index][0]
        next_same[index] = last_seen.get(size)
        last_seen[size] = index
    spans = []
    index = 0
    while index < len(runs):
        closing = next_same[index]
        if closing is None:
            index += 1
            continue
        spans.append((runs[index][0], runs[closing][1]))
        index = closing + 1
    return spans


def _inside(offset: int, spans: list[tuple[int, int]]) -> bool:
    index = bisect.bisect_right(spans, (offset, 1 << 62)) - 1
    return index >= 0 and spans[index][0] <= offset < spans[index][1]


def find_markers(text: str, limit: int) -> list[Marker]:
    """Return at most ``limit`` markers of ``text`` outside code, in order."""
    code = code_spans(text)
    markers = []
    for match in MARKER.finditer(text):
        if _inside(match.start(), code):
            continue
        if match["first"] is not None:
            first, last = int(match["first"]), int(match["last"])
            if not first < last < first + MAX_RANGE:
                continue
            numbers = tuple(range(first, last + 1))
        else:
            numbers = tuple(int(n) for n in re.split(r"[,;]", match["body"]))
        markers.append(Marker(match.start(), match.end(), tuple(dict.fromkeys(numbers))))
        if len(markers) == limit:
            break
    return markers


def sentence_ends(text: str) -> list[int]:
    """Return the offsets where the sentences of ``text`` end, the text's end last."""
    ends = sorted(
        {m.end() for m in _STOP.finditer(text)} | {m.end() for m in _BREAK.finditer(text)}
    )
    if not ends or ends[-1] != len(text):
        ends.append(len(text))
    return ends


def sentence_around(text: str, ends: list[int], start: int) -> tuple[int, int]:
    """Return the sentence that holds offset ``start``; a marker that opens a sentence (it
    follows the full stop) cites the sentence before it, in the same paragraph."""
    index = bisect.bisect_right(ends, start)
    opening = ends[index - 1] if index else 0
    if index and _ONLY_MARKERS.fullmatch(text, opening, start):
        if "\n\n" not in text[opening:start]:
            index -= 1
            opening = ends[index - 1] if index else 0
    closing = ends[index] if index < len(ends) else len(text)
    return trim_span(text, opening, closing)


_ONLY_MARKERS = re.compile(r"(?:\s|\[[\d ,;\-–—]{1,200}\])*")
_LEAD = re.compile(r"\s*(?:(?:[-*+>]|\d{1,9}[.)]|#{1,6})[ \t]+)?")


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Return the span without surrounding whitespace and its list bullet, quote or heading mark."""
    lead = _LEAD.match(text, start, end)
    start = lead.end() if lead else start
    return start, start + len(text[start:end].rstrip())
