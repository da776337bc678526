"""Ctrl-C in the middle of a compile, in a real process: the frame is a failure."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _export_support import json_attributes, json_spans

from otel_dynamo import names

pytestmark = pytest.mark.torch_facing  # how torch unwinds an interrupted compile

PROGRAM = Path(__file__).resolve().parents[1] / "programs" / "interrupted_compile_job.py"
READY_TIMEOUT_S = 120


def _frame_spans(directory: Path) -> list[dict]:
    spans = [span for path in directory.glob("traces-*.jsonl") for span in json_spans(path)]
    return [span for span in spans if span["name"] == names.SPAN_FRAME]


@pytest.mark.slow
def test_sigint_during_a_compile_records_a_failed_frame(tmp_path: Path) -> None:
    """SIGINT while the backend compiles: the job dies of KeyboardInterrupt as it would
    untraced, and its telemetry (flushed at exit) has the frame as a failure with
    error.type KeyboardInterrupt and status ERROR."""
    ready, out = tmp_path / "ready", tmp_path / "telemetry"
    env = {**os.environ, "OTEL_DYNAMO_ENABLED": "true", "OTEL_DYNAMO_OUTPUT_DIR": str(out)}
    job = subprocess.Popen(
        [sys.executable, str(PROGRAM), str(ready)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not ready.exists() and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ready.exists(), job.communicate(timeout=60)[1][-3000:]
    job.send_signal(signal.SIGINT)
    _, stderr = job.communicate(timeout=120)
    assert job.returncode != 0
    assert "KeyboardInterrupt" in stderr
    (frame,) = _frame_spans(out)
    attributes = json_attributes(frame["attributes"])
    assert attributes[names.ATTR_OUTCOME] == names.OUTCOME_FAILURE
    assert attributes[names.ATTR_ERROR_TYPE] == "KeyboardInterrupt"
    assert frame["status"]["code"] in (2, "STATUS_CODE_ERROR")
