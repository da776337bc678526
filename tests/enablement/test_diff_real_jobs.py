"""otel-dynamo diff over real recorded runs: two ranks of a small training job, traced by
environment, against the same job with one extra graph break on rank 1, and with a shape
change that recompiles. Each change is found on its rank, nothing else is reported, and
the --fail-on gate's exit code follows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _export_support import child_environ

pytestmark = pytest.mark.slow

TIMEOUT_S = 300
JOB = """
import os
import torch

EXTRA_BREAK = os.environ.get("JOB_EXTRA_BREAK") == os.environ["RANK"]
SHAPE_CHANGE = os.environ.get("JOB_SHAPE_CHANGE") == "1"

class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        x = torch.relu(self.fc(x))
        print("logged")  # the job's one graph break
        x = x * 2
        if EXTRA_BREAK:
            torch._dynamo.graph_break()  # a second break, of its own kind, where asked
        return x.sum()

torch.manual_seed(0)
model = torch.compile(Block(), backend="aot_eager")
for step in range(3):
    batch = 6 if SHAPE_CHANGE and step == 2 else 4
    model(torch.randn(batch, 8)).backward()
"""


def _record(directory: Path, job: Path, **environ: str) -> Path:
    """Two ranks of the job, traced by environment, their files in ``directory``."""
    directory.mkdir()
    for rank in ("0", "1"):
        env = child_environ(
            OTEL_DYNAMO_ENABLED="true",
            OTEL_DYNAMO_OUTPUT_DIR=str(directory),
            RANK=rank,
            LOCAL_RANK=rank,
            WORLD_SIZE="2",
            TORCHELASTIC_RUN_ID="diff-test",
            **environ,
        )
        done = subprocess.run(
            [sys.executable, str(job)],
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    return directory


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("diff-real")
    job = root / "job.py"
    job.write_text(JOB, encoding="utf-8")
    return {
        "base": _record(root / "base", job),
        "extra_break": _record(root / "extra_break", job, JOB_EXTRA_BREAK="1"),
        "shape_change": _record(root / "shape_change", job, JOB_SHAPE_CHANGE="1"),
    }


def _diff(base: Path, new: Path, *fail_on: str) -> tuple[int, dict[str, Any]]:
    command = [sys.executable, "-m", "otel_dynamo", "diff", str(base), str(new), "--json"]
    for condition in fail_on:
        command += ["--fail-on", condition]
    done = subprocess.run(
        command, env=child_environ(), capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def _process(diff: dict[str, Any], rank: str) -> dict[str, Any]:
    return next(p for p in diff["processes"] if p["process"] == f"rank {rank}")


def test_an_extra_graph_break_on_rank_1_is_the_one_change(recorded):
    """The extra break on rank 1: one new break (its reason, its function), rank 1's break
    count +1, rank 0 unchanged, no recompile or failure news; new_graph_breaks>0 trips."""
    code, diff = _diff(recorded["base"], recorded["extra_break"], "new_graph_breaks>0")
    assert code == 1
    (new_break,) = diff["graph_breaks"]["new"]
    assert "graph_break" in new_break["reason"] and new_break["new_count"] == 1
    assert diff["graph_breaks"]["gone"] == [] and diff["graph_breaks"]["changed"] == []
    assert _process(diff, "1")["totals"]["graph_breaks"]["change"] == 1
    assert all(value["change"] == 0 for value in _count_totals(_process(diff, "0")))
    assert diff["recompiles"] == {"new": [], "gone": [], "changed": []}
    assert diff["failures"] == {"new": [], "gone": [], "changed": []}


def test_a_shape_change_is_a_new_recompile_on_each_rank(recorded):
    """Batch 6 at the last step: Block.forward (named by its qualified name, as everywhere
    in the report) and the function resumed after its break each recompile on a size
    guard, once per rank; no break is new or gone (Dynamo reports the
    break again when it retraces); recompiles>+0 trips, new_graph_breaks>0 does not."""
    code, diff = _diff(recorded["base"], recorded["shape_change"], "recompiles>+0")
    assert code == 1
    recompiles = diff["recompiles"]["new"]
    functions = sorted(r["function"] for r in recompiles)
    assert len(functions) == 2 and functions[0] == "Block.forward"
    assert functions[1].startswith("torch_dynamo_resume_in_forward")
    assert all(r["new_count"] == 2 and "size mismatch" in r["reason"] for r in recompiles)
    assert diff["graph_breaks"]["new"] == [] and diff["graph_breaks"]["gone"] == []
    for rank in ("0", "1"):
        assert _process(diff, rank)["totals"]["recompiles"]["change"] >= 1
    code, _diff_again = _diff(recorded["base"], recorded["shape_change"], "new_graph_breaks>0")
    assert code == 0


def _count_totals(process: dict[str, Any]) -> list[dict[str, Any]]:
    """The count totals of a process (times wobble between runs and are not counts)."""
    keys = ("frame_compiles", "graphs", "ops", "guards", "graph_breaks", "recompiles")
    return [process["totals"][key] for key in keys]
