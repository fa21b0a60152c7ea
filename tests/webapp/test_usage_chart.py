"""The Usage page's chart: a plain SVG of one bar per day, for empty and full months alike."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import date, timedelta

import pytest

from webapp.usage.chart import daily_chart, nice_ceiling, short_number

SVG = "{http://www.w3.org/2000/svg}"
START = date(2026, 11, 1)


def month(values: list[int]) -> list[tuple[date, int]]:
    return [(START + timedelta(days=n), value) for n, value in enumerate(values)]


def test_an_empty_month_draws_no_bars_and_says_nothing_was_used():
    svg = ET.fromstring(str(daily_chart(month([0] * 30), "turns")))
    assert svg.findall(f"{SVG}rect") == []
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert "No turns in these days." in texts
    assert texts[-2:] == ["2026-11-01", "2026-11-30"]
    assert svg.get("aria-label") == "Turns per day, 2026-11-01 to 2026-11-30"


def test_a_full_month_draws_one_bar_per_day_scaled_to_the_busiest():
    values = [n + 1 for n in range(30)]  # 1 … 30: the scale is 50
    svg = ET.fromstring(str(daily_chart(month(values), "searches")))
    bars = svg.findall(f"{SVG}rect")
    assert len(bars) == 30
    heights = [float(bar.get("height")) for bar in bars]
    assert heights == sorted(heights) and heights[-1] / heights[0] == pytest.approx(30, rel=0.02)
    assert [bar.find(f"{SVG}title").text for bar in bars][-1] == "2026-11-30: 30 searches"
    assert "50" in [t.text for t in svg.iter(f"{SVG}text")]
    xs = [float(bar.get("x")) for bar in bars]
    assert xs == sorted(xs) and xs[-1] + float(bars[-1].get("width")) <= 640


def test_the_chart_has_no_inline_style_or_script_the_pages_csp_would_refuse():
    markup = str(daily_chart(month([3] * 30), "<b>pages</b>"))
    assert not re.search(r"style=|<script|<style|href=", markup)
    assert "<b>" not in markup and "&lt;b&gt;pages&lt;/b&gt;" in markup


def test_scale_figures_are_round_and_short():
    assert [nice_ceiling(v) for v in (0, 1, 3, 7, 30, 101, 4999)] == [1, 1, 5, 10, 50, 200, 5000]
    assert [short_number(v) for v in (950, 12_000, 3_500_000)] == ["950", "12k", "3.5M"]
