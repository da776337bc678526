"""``otel-dynamo report`` names the module a frame compile ran on: two Hugging Face models
compiled whole in one real job (tests/programs/hf_module_job.py), whose forwards both run
as transformers' decorator ``wrapper``, and a plain function.

The job runs twice in fresh processes, plain and under ``OTEL_DYNAMO_ENABLED=true``: the
traced job's outputs must be the plain job's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _export_support import PROGRAMS, child_environ, json_attributes, json_spans, one_file

from otel_dynamo import names

JOB = PROGRAMS / "hf_module_job.py"
TIMEOUT_S = 240
OPT = "transformers.models.opt.modeling_opt.OPTForCausalLM"
GPT2 = "transformers.models.gpt2.modeling_gpt2.GPT2LMHeadModel"
WRAPPER_FILE = "transformers/utils/generic.py"
"""Where transformers' ``can_return_tuple`` defines ``wrapper``, as the report shows it."""

pytestmark = pytest.mark.slow


def _run_job(tmp_path: Path, *, traced: bool) -> dict[str, Any]:
    arm = "traced" if traced else "plain"
    overrides = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / f"inductor-{arm}")}
    if traced:
        overrides["OTEL_DYNAMO_ENABLED"] = "true"
        overrides["OTEL_DYNAMO_OUTPUT_DIR"] = str(tmp_path / "telemetry")
    out = tmp_path / f"{arm}.json"
    done = subprocess.run(
        [sys.executable, str(JOB), str(out)],
        env=child_environ(**overrides),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(out.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _report(directory: Path, *extra: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "otel_dynamo", "report", str(directory), *extra],
        env=child_environ(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """(telemetry directory, traced outputs, plain outputs) of one pair of runs."""
    tmp_path = tmp_path_factory.mktemp("hf_module_job")
    traced = _run_job(tmp_path, traced=True)
    plain = _run_job(tmp_path, traced=False)
    return tmp_path / "telemetry", traced, plain


def test_the_traced_job_computes_what_the_plain_job_does(job):
    _, traced, plain = job
    assert set(traced) == {"opt", "gpt2", "scaled_sum"}
    assert traced == plain


def test_frame_spans_name_the_module_class_and_keep_the_code_name(job):
    """Each model's frame span says its module class; the plain function's says none."""
    telemetry, _, _ = job
    frames = [
        json_attributes(span["attributes"])
        for span in json_spans(one_file(telemetry, "traces"))
        if span["name"] == names.SPAN_FRAME
    ]
    found = {
        frame[names.ATTR_CODE_FUNCTION]: frame.get(names.ATTR_COMPILE_MODULE_CLASS)
        for frame in frames
        if frame[names.ATTR_CODE_FUNCTION] != "wrapper"
    }
    wrappers = sorted(
        frame[names.ATTR_COMPILE_MODULE_CLASS]
        for frame in frames
        if frame[names.ATTR_CODE_FUNCTION] == "wrapper"
    )
    assert wrappers == [GPT2, OPT]
    assert found == {"scaled_sum": None}
    assert all(
        frame[names.ATTR_CODE_FILE].replace("\\", "/").endswith(WRAPPER_FILE)
        for frame in frames
        if frame[names.ATTR_CODE_FUNCTION] == "wrapper"
    )


def test_report_json_keeps_the_code_name_and_adds_the_module(job):
    telemetry, _, _ = job
    summary = json.loads(_report(telemetry, "--json"))
    (process,) = summary["processes"]
    rows = sorted((row["function"], row["module"]) for row in process["compiles"])
    assert rows == [("scaled_sum", None), ("wrapper", GPT2), ("wrapper", OPT)]
    slowest = sorted(
        (row["function"], row["module"], row["compiles"])
        for row in summary["compile_time"]["slowest_functions"]
    )
    # One code, two models: two rows, not one of two compiles.
    assert slowest == [("scaled_sum", None, 1), ("wrapper", GPT2, 1), ("wrapper", OPT, 1)]


def test_report_terminal_names_the_model_and_the_package(job):
    telemetry, _, _ = job
    text = _report(telemetry)
    slowest = text.split("slowest functions", 1)[1].split("\n\n", 1)[0]
    lines = {line.strip().split("  ")[0]: line for line in slowest.splitlines()[2:]}
    assert set(lines) == {"OPTForCausalLM (wrapper)", "GPT2LMHeadModel (wrapper)", "scaled_sum"}
    assert "generic.py:" in lines["OPTForCausalLM (wrapper)"]
    frame_table = text.split("Frame compiles (3)", 1)[1]
    assert "OPTForCausalLM (" in frame_table and "GPT2LMHeadModel (" in frame_table
    _report(telemetry, "--html", str(telemetry.parent / "report.html"))
    page = (telemetry.parent / "report.html").read_text(encoding="utf-8")
    assert "OPTForCausalLM (wrapper)" in page and WRAPPER_FILE in page
