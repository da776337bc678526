"""Eight ranks of one job (torchrun, gloo on CPU), rank 3 given a ragged last shard so
it alone recompiles: the report names rank 3 and its first difference, and the shipped
alert TorchCompileRanksDiverge fires for rank 3 alone on the series the eight processes
exported (converted as the shipped Collector writes them, run through promtool)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import _stack_support as support
import pytest
import yaml
from _export_support import PROGRAMS, child_environ, free_port
from _prometheus_series import counter_series

from otel_dynamo.report import read_report

RANKS = 8
DIVERGING_RANK = 3
JOB_NAME = "eight-ranks"
ALERT = "TorchCompileRanksDiverge"
RULES = support.COLLECTOR / "stack" / "otel-dynamo-alerts.yml"
TIMEOUT_S = 600
HELD_MINUTES = 20
"""How long the test holds each rank's final counts in Prometheus: past the alert's ``for``."""

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def eight_ranks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The telemetry directory of one 8-rank run in which rank 3 recompiles."""
    out = tmp_path_factory.mktemp("eight_ranks")
    env = child_environ(
        OTEL_DYNAMO_ENABLED="true",
        OTEL_DYNAMO_OUTPUT_DIR=str(out),
        OTEL_SERVICE_NAME=JOB_NAME,
        OMP_NUM_THREADS="1",
    )
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(RANKS)]
    command += ["--master-port", str(free_port()), str(PROGRAMS / "variants_job.py")]
    command += ["--calls", "3", "--diverge-rank", str(DIVERGING_RANK), "--extra", "2"]
    done = subprocess.run(
        command, env=env, cwd=out, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # eight ranks ending at once on a busy machine: each rank's files are still whole
    assert "telemetry shutdown did not finish" not in done.stderr, done.stderr[-3000:]
    return out


def test_the_report_names_the_diverging_rank_and_its_first_difference(eight_ranks: Path) -> None:
    """The ranks table compares all 8; only rank 3 diverges, in graphs, recompiles and
    guards, first at its recompile 0/1, which no other rank made."""
    ranks = read_report([eight_ranks]).summary["ranks"]
    assert ranks["compared"] is True and ranks["diverged"] is True
    assert [row["rank"] for row in ranks["rows"]] == list(range(RANKS))
    diverging = [row for row in ranks["rows"] if row["diverges"]]
    assert [row["rank"] for row in diverging] == [DIVERGING_RANK]
    (row,) = diverging
    assert row["diverges"] == ["graphs", "recompiles", "guards"]
    assert row["first_difference"]["compile_id"] == "0/1"


def test_each_rank_reports_the_calls_its_variants_served(eight_ranks: Path) -> None:
    """Ranks 0-2 and 4-7 served 3 calls with one variant; rank 3 served 1, then 2 with
    the variant only it compiled."""
    processes = read_report([eight_ranks]).summary["processes"]
    calls = {p["rank"]: [row["calls"] for row in p["compiles"]] for p in processes}
    expected = {rank: [3] for rank in range(RANKS)}
    expected[DIVERGING_RANK] = [1, 2]
    assert calls == expected


def _promtool() -> str:
    binary = shutil.which("promtool")
    if binary is None:
        pytest.skip("promtool is not installed (Debian: apt-get install prometheus)")
    return binary


def _rules_without_annotations() -> dict[str, Any]:
    """The shipped rules, the alert's annotations left out: their text is pinned by the
    rules' own unit tests; this test pins when and for whom the alert fires."""
    rules = yaml.safe_load(RULES.read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") == ALERT:
                rule.pop("annotations", None)
    return dict(rules)


def test_the_shipped_alert_fires_for_the_diverging_rank_alone(
    eight_ranks: Path, tmp_path: Path
) -> None:
    """The 8 processes' counters, held for 20 minutes: after the alert's 5 minutes the
    alert fires for rank 3 in frame_compiles and recompiles, and for no other rank."""
    promtool = _promtool()
    series = counter_series(sorted(eight_ranks.glob("metrics-*.jsonl")))
    ranked = {dict(s.labels).get("torch_distributed_rank") for s in series}
    assert ranked == {str(rank) for rank in range(RANKS)}
    (tmp_path / "rules.yml").write_text(yaml.safe_dump(_rules_without_annotations()))
    run_id = {dict(s.labels)["torch_distributed_run_id"] for s in series}.pop()
    expected = [
        {
            "exp_labels": {
                "severity": "warning",
                "job": JOB_NAME,
                "torch_distributed_run_id": run_id,
                "torch_distributed_rank": str(DIVERGING_RANK),
                "counted": counted,
            }
        }
        for counted in ("frame_compiles", "recompiles")
    ]
    cases = {
        "rule_files": ["rules.yml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    {"series": s.selector(), "values": f"{s.value:g}+0x{HELD_MINUTES}"}
                    for s in series
                ],
                "alert_rule_test": [
                    {"eval_time": "3m", "alertname": ALERT, "exp_alerts": []},
                    {"eval_time": "10m", "alertname": ALERT, "exp_alerts": expected},
                ],
            }
        ],
    }
    (tmp_path / "cases.yml").write_text(yaml.safe_dump(cases))
    done = support.run_promtool(promtool, "test", "rules", "cases.yml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
