"""Durations read right at every magnitude: the terminal's formatter, the page's script
(the same figures in a real browser) and the timeline's axis on runs of minutes and hours."""

from __future__ import annotations

import html
import itertools
import json
import random
import re
from pathlib import Path

import pytest
from _report_support import FakeCompile, run_chromium, write_traces

from otel_dynamo.report import load_telemetry, render_html, summarize
from otel_dynamo.report.read.values import seconds
from otel_dynamo.report.render.format import duration
from otel_dynamo.report.render.html.assets import DURATION_SCRIPT

EXPECTED = (
    (4e-6, "4 µs"),
    (0.000_999_4, "999 µs"),
    (0.000_999_7, "1.0 ms"),
    (0.012_34, "12.3 ms"),
    (0.999_97, "1.00 s"),
    (1.0, "1.00 s"),
    (12.0, "12.00 s"),
    (59.994, "59.99 s"),
    (59.997, "1 min 00 s"),
    (61.2, "1 min 01 s"),
    (100.0, "1 min 40 s"),
    (120.0, "2 min 00 s"),
    (1234.0, "20 min 34 s"),
    (3599.4, "59 min 59 s"),
    (3599.7, "1 h 00 min"),
    (7265.0, "2 h 01 min"),
    (360_000.0, "100 h 00 min"),
)
"""Seconds and how they read, from microseconds to days (no value on a rounding tie)."""


@pytest.mark.parametrize(("seconds", "text"), EXPECTED)
def test_terminal_duration_reads_every_magnitude(seconds: float, text: str) -> None:
    """format.duration writes each magnitude in its unit, whole numbers keeping their zeros."""
    assert duration(seconds) == text


def test_terminal_duration_of_nothing_and_of_zero() -> None:
    """Not recorded reads "-", zero reads "0 s"."""
    assert (duration(None), duration(0)) == ("-", "0 s")


def _browser_texts(tmp_path: Path, chromium: str, expression: str) -> list[str]:
    """The JSON list ``expression`` evaluates to on a page holding only duration.js."""
    page = (
        "<!doctype html><html><body><pre id='out'></pre><script>"
        + DURATION_SCRIPT
        + f"\ndocument.getElementById('out').textContent = JSON.stringify({expression});"
        + "</script></body></html>"
    )
    path = tmp_path / "durations.html"
    path.write_text(page, encoding="utf-8")
    result = run_chromium(chromium, tmp_path / "profile", path.as_uri(), "--dump-dom")
    match = re.search(r'<pre id="out">(.*?)</pre>', result.stdout, re.S)
    assert match is not None, f"no output; Chromium stderr: {result.stderr[-2000:]}"
    texts = json.loads(html.unescape(match.group(1)))
    assert isinstance(texts, list)
    return [str(text) for text in texts]


@pytest.mark.slow
def test_page_writes_durations_as_the_terminal_does(tmp_path: Path, chromium: str) -> None:
    """The page's otelDynamoDuration.duration (microseconds in) gives format.duration's text
    for every magnitude."""
    micros = json.dumps([seconds * 1e6 for seconds, _ in EXPECTED])
    texts = _browser_texts(tmp_path, chromium, f"{micros}.map(otelDynamoDuration.duration)")
    assert texts == [text for _, text in EXPECTED]


@pytest.mark.slow
def test_axis_ticks_keep_their_zeros(tmp_path: Path, chromium: str) -> None:
    """Round tick values read whole: 100 s is "1 min 40 s", never "1 s"; 2 h is "2 h"."""
    ticks = [500, 2.5e6, 20e6, 100e6, 120e6, 90 * 60e6, 2 * 3600e6, 25 * 3600e6]
    texts = _browser_texts(tmp_path, chromium, f"{json.dumps(ticks)}.map(otelDynamoDuration.tick)")
    assert texts == ["500 µs", "2.5 s", "20 s", "1 min 40 s", "2 min", "1 h 30 min", "2 h", "25 h"]


_TICK = re.compile(r"^(?:(\d+) h)? ?(?:(\d+) min)? ?(?:([\d.]+) s)?$")


def _tick_seconds(text: str) -> float:
    """Seconds of an axis label made of h, min and s parts (or "0")."""
    if text == "0":
        return 0.0
    match = _TICK.match(text)
    assert match is not None and text, f"axis label {text!r} is not h/min/s"
    hours, minutes, seconds = (float(part or 0) for part in match.groups())
    return hours * 3600 + minutes * 60 + seconds


@pytest.mark.slow
@pytest.mark.parametrize("run_seconds", [150, 2 * 3600 + 600])
def test_timeline_axis_of_a_long_run_reads_its_times(
    tmp_path: Path, chromium: str, run_seconds: int
) -> None:
    """A run of minutes or hours: the axis labels are evenly spaced times from 0 up to
    the run's length, in order, each one step more than the last."""
    compiles = [FakeCompile("0/0", duration_ms=run_seconds * 1000)]
    traces = write_traces(tmp_path / "traces.jsonl", compiles)
    telemetry = load_telemetry([traces])
    (tmp_path / "r.html").write_text(render_html(telemetry, summarize(telemetry)), "utf-8")
    result = run_chromium(
        chromium, tmp_path / "profile", (tmp_path / "r.html").as_uri(), "--dump-dom"
    )
    match = re.search(r'data-timeline-axis="([^"]*)"', result.stdout)
    assert match is not None, f"no axis; Chromium stderr: {result.stderr[-2000:]}"
    seconds = [_tick_seconds(label) for label in html.unescape(match.group(1)).split(" | ")]
    steps = {round(b - a, 3) for a, b in itertools.pairwise(seconds)}
    assert (seconds[0], len(steps), len(seconds) > 2) == (0.0, 1, True)
    assert run_seconds - steps.pop() < seconds[-1] <= run_seconds


def test_seconds_of_nanoseconds_round_as_round_does() -> None:
    """values.seconds(ns) is round(ns / 1e9, 6), the same float, for durations of every
    size: ties 500 ns past a microsecond, neighbours of ties, past 11 days, negative."""
    chance = random.Random(7)
    samples = [chance.randrange(0, 10**15) for _ in range(20_000)]
    samples += [chance.randrange(0, 10**7) for _ in range(20_000)]
    samples += [
        chance.randrange(0, 10**12) * 1000 + offset
        for offset in (0, 1, 499, 500, 501, 999)
        for _ in range(5_000)
    ]
    samples += [10**15 + delta for delta in range(-3, 4)] + [-1, -400, -500, -1600, 1 << 63]
    for ns in samples:
        expected = round(ns / 1e9, 6)
        assert (seconds(ns), repr(seconds(ns))) == (expected, repr(expected)), ns
