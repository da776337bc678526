"""``otel-dynamo report`` at job scale: 8 ranks x 1,000 frame compiles."""

from __future__ import annotations

import contextlib
import dataclasses
import io
from pathlib import Path

import pytest
from _report_support import write_job

from otel_dynamo import cli

RANKS = 8
COMPILES_PER_RANK = 1000
MAX_HTML_BYTES = 5 * 1000 * 1000

pytestmark = pytest.mark.slow


@dataclasses.dataclass(frozen=True)
class ReportRun:
    exit_code: int
    stdout: str
    html_bytes: int


@pytest.fixture(scope="module")
def big_report(tmp_path_factory: pytest.TempPathFactory) -> ReportRun:
    """One report (tables and --html) over files of 8 ranks, written by the SDK."""
    directory = tmp_path_factory.mktemp("job")
    write_job(directory, ranks=RANKS, compiles_per_rank=COMPILES_PER_RANK, diverging_rank=3)
    html = directory.parent / "report.html"
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = cli.main(["report", str(directory), "--html", str(html)])
    return ReportRun(code, stdout.getvalue(), Path(html).stat().st_size)


def test_html_stays_under_5_mb(big_report: ReportRun) -> None:
    """The HTML page of 8,000 compiles (all spans on the timeline) is under 5 MB."""
    assert big_report.html_bytes < MAX_HTML_BYTES, f"{big_report.html_bytes} bytes"


def test_every_compile_is_counted_and_the_diverging_rank_flagged(big_report: ReportRun) -> None:
    """Exit 0, 8,000 compiles in the headline, rank 3 flagged at the compile it changed."""
    lines = big_report.stdout.splitlines()
    diverging = [line for line in lines if "DIVERGES" in line]
    assert (big_report.exit_code, lines[1].split(" · ")[0], diverging) == (
        0,
        "8000 frame compiles",
        [
            "  rank 3 DIVERGES in graphs; first at 17/0: graphs 2, guards 8 "
            "(most ranks: graphs 1, guards 8)"
        ],
    )
