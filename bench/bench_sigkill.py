"""What is on disk after a SIGKILL, which runs no handler: kill a compiling job at random
moments and count what reached the files.

    python bench/bench_sigkill.py [--rounds 20]

Each round starts ``tests/programs/steady_compiles_job.py`` (a new frame compile every
0.2 s, each printing when it ended) traced into the default files in a temporary
directory, kills it with SIGKILL 4 to 8 s in, and reads the files back: how many of the
compiles that ended are counted in the metrics file, how many have their frame span and
their ``frame_compiled`` log event on disk, how long before the kill the lost ones ended
(the span and log export interval bounds it: 1 s by default), and whether any line is
torn. A kill in the middle of a write can cut a file's last line (Linux stops a large
write to a file at a page boundary when the process gets SIGKILL): such a line, the last
of its file and without its newline, is counted apart ("last lines cut"); any other line
that does not parse is torn. Prints one line per round and a summary.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
JOB = ROOT / "tests" / "programs" / "steady_compiles_job.py"
DEFAULT_ROUNDS = 20
KILL_WINDOW_S = (4.0, 8.0)
COMPILES_METRIC = "torch.compile.compiles"
FRAME_SPAN = "torch.compile.frame"
FRAME_COMPILED_EVENT = "torch.compile.frame_compiled"
COMPILE_ID = "torch.compile.id"


@dataclass(frozen=True)
class OnDisk:
    """What one killed job's files hold."""

    counted: int
    frame_ids: frozenset[str]
    frame_events: int
    torn_lines: int
    cut_last_lines: int


def _records(directory: Path, kind: str) -> tuple[list[dict[str, Any]], int, int]:
    """The records of ``kind``'s files, the torn lines, and the last lines cut by the kill."""
    records, torn, cut = [], 0, 0
    for path in directory.glob(f"{kind}-*.jsonl"):
        text = path.read_text(errors="replace")
        lines = text.splitlines()
        for number, line in enumerate(lines, 1):
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                if number == len(lines) and not text.endswith("\n"):
                    cut += 1
                else:
                    torn += 1
    return records, torn, cut


def read_back(directory: Path) -> OnDisk:
    metrics, torn_metrics, cut_metrics = _records(directory, "metrics")
    traces, torn_traces, cut_traces = _records(directory, "traces")
    logs, torn_logs, cut_logs = _records(directory, "logs")
    counted = max(
        [0]
        + [
            sum(int(point["asInt"]) for point in metric["sum"]["dataPoints"])
            for line in metrics
            for resource in line["resourceMetrics"]
            for scope in resource["scopeMetrics"]
            for metric in scope["metrics"]
            if metric["name"] == COMPILES_METRIC
        ]
    )
    frame_ids = frozenset(
        attribute["value"]["stringValue"]
        for line in traces
        for resource in line["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
        if span["name"] == FRAME_SPAN
        for attribute in span["attributes"]
        if attribute["key"] == COMPILE_ID
    )
    frame_events = sum(
        1
        for line in logs
        for resource in line["resourceLogs"]
        for scope in resource["scopeLogs"]
        for record in scope["logRecords"]
        if record.get("eventName") == FRAME_COMPILED_EVENT
    )
    return OnDisk(
        counted,
        frame_ids,
        frame_events,
        torn_metrics + torn_traces + torn_logs,
        cut_metrics + cut_traces + cut_logs,
    )


def one_round(rng: random.Random) -> tuple[dict[int, int], int, OnDisk]:
    """Run, kill, read back: the compiles that ended (number: time_ns), the kill's time_ns."""
    with tempfile.TemporaryDirectory() as directory:
        env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
        env.update(OTEL_DYNAMO_ENABLED="true", OTEL_DYNAMO_OUTPUT_DIR=directory)
        job = subprocess.Popen(
            [sys.executable, str(JOB)], env=env, stdout=subprocess.PIPE, text=True
        )
        assert job.stdout is not None
        ended: dict[int, int] = {}
        kill_at = time.monotonic() + rng.uniform(*KILL_WINDOW_S)
        for line in job.stdout:
            number, at_ns = line.split()
            ended[int(number)] = int(at_ns)
            if time.monotonic() >= kill_at:
                break
        killed_ns = time.time_ns()
        job.send_signal(signal.SIGKILL)
        job.wait()
        for line in job.stdout:
            number, at_ns = line.split()
            ended[int(number)] = int(at_ns)
        return ended, killed_ns, read_back(Path(directory))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    rng = random.Random(arguments.seed)
    totals = {"ended": 0, "counted": 0, "spans": 0, "events": 0, "torn": 0, "cut": 0}
    worst_lost_age_s = 0.0
    for number in range(arguments.rounds):
        ended, killed_ns, on_disk = one_round(rng)
        lost = [n for n in ended if f"{n}/0" not in on_disk.frame_ids]
        ages = [(killed_ns - ended[n]) / 1e9 for n in lost]
        worst_lost_age_s = max([worst_lost_age_s, *ages])
        totals["ended"] += len(ended)
        totals["counted"] += min(on_disk.counted, len(ended))
        totals["spans"] += len(ended) - len(lost)
        totals["events"] += min(on_disk.frame_events, len(ended))
        totals["torn"] += on_disk.torn_lines
        totals["cut"] += on_disk.cut_last_lines
        print(
            f"round {number + 1}: {len(ended)} compiles ended; counted in metrics "
            f"{on_disk.counted}; frame spans {len(ended) - len(lost)}, frame_compiled events "
            f"{on_disk.frame_events}; lost spans ended {max(ages, default=0.0):.2f} s before "
            f"the kill at most; torn lines {on_disk.torn_lines}; last lines cut by the kill "
            f"{on_disk.cut_last_lines}",
            flush=True,
        )
    print(
        f"{arguments.rounds} kills: compiles counted in metrics {totals['counted']}/"
        f"{totals['ended']}, frame spans {totals['spans']}/{totals['ended']}, frame_compiled "
        f"events {totals['events']}/{totals['ended']}; the lost ones ended at most "
        f"{worst_lost_age_s:.2f} s before the kill; torn lines {totals['torn']}; last lines "
        f"cut by the kill {totals['cut']}"
    )


if __name__ == "__main__":
    main()
