"""The Usage page's chart: one value per day as bars, drawn on the server as a plain SVG.

No charting script and nothing fetched: the page's Content-Security-Policy allows only
Lookout's own assets and no inline styles, so the chart is markup with classes that
static/usage.css colours. Every bar carries a ``<title>`` with its day and value, and the
figure a label saying what it shows, so a screen reader gets what the picture shows.
"""

from __future__ import annotations

from datetime import date

from markupsafe import Markup, escape

WIDTH = 640
HEIGHT = 180
LEFT = 48  # room for the scale's numbers
BOTTOM = 22  # room for the dates
TOP = 10
RIGHT = 6


def nice_ceiling(value: int) -> int:
    """Return the smallest of 1, 2, 5 × 10ⁿ at or above ``value`` (at least 1)."""
    step = 1
    while True:
        for factor in (1, 2, 5):
            if step * factor >= value:
                return step * factor
        step *= 10


def short_number(value: int) -> str:
    """Return a scale figure as people read it: 950, 12k, 3.5M."""
    for size, suffix in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if value >= size:
            return f"{value / size:.3g}{suffix}"
    return str(value)


def daily_chart(days: list[tuple[date, int]], what: str) -> Markup:
    """Return an SVG of one bar per day; ``what`` names the value ("turns", "searches")."""
    first, last = (days[0][0], days[-1][0]) if days else (None, None)
    period = f"{first.isoformat()} to {last.isoformat()}" if first and last else "no days"
    top = max((value for _, value in days), default=0)
    plot_width = WIDTH - LEFT - RIGHT
    plot_height = HEIGHT - TOP - BOTTOM
    base = TOP + plot_height
    parts = [
        f'<svg class="usage-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(what.capitalize())} per day, {period}" '
        f'xmlns="http://www.w3.org/2000/svg">',
        f'<line class="axis" x1="{LEFT}" y1="{base}" x2="{WIDTH - RIGHT}" y2="{base}"/>',
    ]
    if top == 0:
        parts.append(
            f'<text class="empty" x="{LEFT + plot_width / 2:g}" y="{TOP + plot_height / 2:g}" '
            f'text-anchor="middle">No {escape(what)} in these days.</text>'
        )
    else:
        scale = nice_ceiling(top)
        parts += [
            f'<line class="grid" x1="{LEFT}" y1="{TOP}" x2="{WIDTH - RIGHT}" y2="{TOP}"/>',
            f'<text class="scale" x="{LEFT - 6}" y="{TOP + 4}" text-anchor="end">'
            f"{short_number(scale)}</text>",
            f'<text class="scale" x="{LEFT - 6}" y="{base}" text-anchor="end">0</text>',
        ]
        slot = plot_width / len(days)
        for index, (day, value) in enumerate(days):
            if value <= 0:
                continue
            height = max(1.0, plot_height * value / scale)
            parts.append(
                f'<rect class="bar" x="{LEFT + index * slot + slot * 0.1:.1f}" '
                f'y="{base - height:.1f}" width="{slot * 0.8:.1f}" height="{height:.1f}">'
                f"<title>{day.isoformat()}: {value:,} {escape(what)}</title></rect>"
            )
    if first and last:
        parts += [
            f'<text class="date" x="{LEFT}" y="{HEIGHT - 6}">{first.isoformat()}</text>',
            f'<text class="date" x="{WIDTH - RIGHT}" y="{HEIGHT - 6}" text-anchor="end">'
            f"{last.isoformat()}</text>",
        ]
    parts.append("</svg>")
    return Markup("".join(parts))
