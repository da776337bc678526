"""``otel-dynamo report`` and ``diff`` reading a run back from a real Jaeger (memory and
Badger storage): a real traced job sends its spans to Jaeger and writes its own files at
once, and the report from Jaeger is the report from the files."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _export_support import child_environ
from _real_stack import JAEGER_STORAGES, Jaeger, running_jaeger
from _report_compare import differences, without_log_only

from otel_dynamo import cli, names
from otel_dynamo.report.read.jaeger import DEFAULT_TRACE_LIMIT, rfc3339
from otel_dynamo.report.summary.source import SAMPLING_KEPT

pytestmark = pytest.mark.slow

JOB = Path(__file__).resolve().parents[1] / "programs" / "jaeger_job.py"
RUNS = ("run-a", "run-b")
STORED_SECONDS = 60.0
SOURCE_LINES = 3
"""The terminal report's note on where the run came from (render.format.source_lines)."""


@dataclasses.dataclass
class Stored:
    """Two runs of one service (two torchrun run ids), in Jaeger and in files."""

    jaeger: Jaeger
    service: str
    files: dict[str, Path]
    start: str
    end: str

    def address(self, run_id: str | None = None, **extra: str) -> str:
        query = {"service": self.service, "start": self.start, "end": self.end, **extra}
        if run_id is not None:
            query["run_id"] = run_id
        return f"{self.jaeger.query_url}/?{urllib.parse.urlencode(query)}"


def _trace_ids(directory: Path) -> set[str]:
    found = set()
    for path in directory.glob("traces-*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            for entry in json.loads(line)["resourceSpans"]:
                for scope in entry["scopeSpans"]:
                    found.update(span["traceId"] for span in scope["spans"])
    return found


def _stored_trace_ids(jaeger: Jaeger, service: str, start: str, end: str) -> set[str]:
    query = urllib.parse.urlencode(
        {
            "query.service_name": service,
            "query.start_time_min": start,
            "query.start_time_max": end,
            "query.num_traces": 10000,
        }
    )
    answer = jaeger.get(f"/api/v3/traces?{query}")
    found: set[str] = set()
    for entry in (answer or {}).get("result", {}).get("resourceSpans", []):
        for scope in entry["scopeSpans"]:
            found.update(span["traceId"] for span in scope["spans"])
    return found


@pytest.fixture(scope="module", params=JAEGER_STORAGES)
def stored(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stored]:
    storage = request.param
    workdir = tmp_path_factory.mktemp(f"jaeger-{storage}")
    with running_jaeger(workdir / "jaeger", storage) as jaeger:
        service = f"otel-dynamo-jaeger-{storage}"
        start = rfc3339(time.time_ns() - 1_000_000_000)
        files = {}
        for run_id in RUNS:
            files[run_id] = workdir / run_id
            env = child_environ(
                OTEL_DYNAMO_ENABLED="true",
                OTEL_EXPORTER_OTLP_ENDPOINT=f"http://{jaeger.otlp_grpc}",
                OTEL_EXPORTER_OTLP_INSECURE="true",
                OTEL_TRACES_EXPORTER="otlp,otlp_file",
                OTEL_LOGS_EXPORTER="otlp_file",
                OTEL_METRICS_EXPORTER="none",
                OTEL_DYNAMO_OUTPUT_DIR=str(files[run_id]),
                OTEL_SERVICE_NAME=service,
                TORCHELASTIC_RUN_ID=run_id,
            )
            done = subprocess.run(
                [sys.executable, str(JOB)],
                check=False,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, done.stderr
        end = rfc3339(time.time_ns() + 1_000_000_000)
        expected = set().union(*(_trace_ids(path) for path in files.values()))
        deadline = time.monotonic() + STORED_SECONDS
        while _stored_trace_ids(jaeger, service, start, end) != expected:
            assert time.monotonic() < deadline, "Jaeger never held every trace the job wrote"
            time.sleep(0.5)
        yield Stored(jaeger, service, files, start, end)


def _report(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["report", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_report_from_jaeger_is_the_files_report(
    stored: Stored, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json from Jaeger equals --json from the run's own files (traces and logs), section
    for section, apart from the inputs, the source and the log-only keys."""
    code, out, err = _report(capsys, stored.address("run-a"), "--json")
    assert (code, err) == (0, "")
    from_jaeger = json.loads(out)
    _, out, _ = _report(capsys, str(stored.files["run-a"]), "--json")
    from_files = json.loads(out)
    assert from_files["totals"]["graph_breaks"] > 0 and from_files["totals"]["recompiles"] > 0
    assert from_files["totals"]["failures"] > 0
    assert differences(without_log_only(from_jaeger), without_log_only(from_files)) == []
    source = from_jaeger["source"]
    assert source["kind"] == "jaeger" and source["service"] == stored.service
    assert (source["run_id"], source["truncated_slices"]) == ("run-a", [])
    assert source["traces"] == len(_trace_ids(stored.files["run-a"]))
    assert set(source["complete"]) == set(SAMPLING_KEPT)
    assert from_files["source"] is None


def test_terminal_report_from_jaeger_is_the_traces_files_report(
    stored: Stored, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The terminal report from Jaeger is the one from the run's trace files, line for
    line, but for its heading and the note on its source (which the page shows too)."""
    page = tmp_path / "run.html"
    code, from_jaeger, err = _report(
        capsys, stored.address("run-a"), "--color", "never", "--html", str(page)
    )
    assert (code, err) == (0, f"otel-dynamo: wrote the HTML page {page}\n")
    assert "<h2>Source</h2><ul><li>read from Jaeger: service " in page.read_text("utf-8")
    traces = sorted(str(path) for path in stored.files["run-a"].glob("traces-*.jsonl"))
    _, from_files, _ = _report(capsys, *traces, "--color", "never")
    jaeger_lines, file_lines = from_jaeger.splitlines(), from_files.splitlines()
    assert jaeger_lines[0] == "otel-dynamo report: 1 process read from Jaeger"
    assert jaeger_lines[1] == file_lines[1]  # the counts
    assert jaeger_lines[2].startswith("read from Jaeger: service ")
    assert jaeger_lines[2 + SOURCE_LINES :] == file_lines[2:]


def test_slices_split_at_the_trace_limit_give_the_same_report(
    stored: Stored, capsys: pytest.CaptureFixture[str]
) -> None:
    """With limit=2 the window is read in many slices (split where an answer held 2
    traces) and the report is the same as read in one query."""
    _, out, _ = _report(capsys, stored.address("run-a"), "--json")
    whole = json.loads(out)
    code, out, err = _report(capsys, stored.address("run-a", limit="2"), "--json")
    assert (code, err) == (0, "")
    sliced = json.loads(out)
    assert whole["source"]["queries"] == 2  # the services, one slice
    assert sliced["source"]["queries"] > 2 + 2 * whole["source"]["traces"] // 2
    assert sliced["source"]["traces"] == whole["source"]["traces"]
    for key in ("totals", "processes", "ranks", "compile_time"):
        assert sliced[key] == whole[key], key
    assert whole["source"]["traces"] < DEFAULT_TRACE_LIMIT


def test_run_id_chooses_one_of_two_runs_of_a_service(
    stored: Stored, capsys: pytest.CaptureFixture[str]
) -> None:
    """run_id= keeps the processes of that torchrun run only; without it both are read."""
    reports = {}
    for run_id in (*RUNS, None):
        code, out, _ = _report(capsys, stored.address(run_id), "--json")
        assert code == 0
        reports[run_id] = json.loads(out)
    for run_id in RUNS:
        processes = reports[run_id]["processes"]
        assert [process["run_id"] for process in processes] == [run_id]
    both = reports[None]["processes"]
    assert sorted(process["run_id"] for process in both) == list(RUNS)


def test_an_unknown_run_id_is_one_line_naming_those_there(
    stored: Stored, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run id no trace carries: one line, the run ids found, exit 1, no report."""
    code, out, err = _report(capsys, stored.address("run-z"))
    assert (code, out) == (1, "")
    assert len(err.splitlines()) == 1
    assert f"{names.RESOURCE_RUN_ID}=run-z" in err and "run-a, run-b" in err


def test_an_unknown_service_lists_the_services_jaeger_knows(
    stored: Stored, capsys: pytest.CaptureFixture[str]
) -> None:
    """A service the real Jaeger does not know: one line listing the ones it does."""
    address = stored.address().replace(f"service={stored.service}", "service=nope")
    code, out, err = _report(capsys, address)
    assert (code, out, len(err.splitlines())) == (1, "", 1)
    assert err.strip().endswith(f"no service 'nope'; the services it knows: {stored.service}")


def test_diff_reads_a_jaeger_address_on_each_side(
    stored: Stored, capsys: pytest.CaptureFixture[str]
) -> None:
    """diff of two Jaeger runs, and of a run's files against the same run in Jaeger: it
    compares them (the same job twice, the same run: the same totals)."""
    for base, new in (
        (stored.address("run-a"), stored.address("run-b")),
        (str(stored.files["run-a"]), stored.address("run-a")),
    ):
        code = cli.main(["diff", base, new, "--json", "--fail-on", "new_graph_breaks>0"])
        out, err = capsys.readouterr()
        assert (code, err) == (0, ""), err
        diff = json.loads(out)
        changed = {key for key, row in diff["totals"].items() if row["base"] != row["new"]}
        for key in ("graph_breaks", "recompiles", "failures", "frame_compiles"):
            assert key not in changed


def _array_keys(entries: list[dict[str, Any]]) -> dict[str, str]:
    """Each otel_dynamo array attribute key in ``entries`` and the kind of value it came as."""
    kinds = {}
    for entry in entries:
        for scope in entry["scopeSpans"]:
            for span in scope["spans"]:
                items = [*span.get("attributes", [])]
                for event in span.get("events", []):
                    items += event.get("attributes", [])
                for item in items:
                    if item["key"] in names.ARRAY_ATTRIBUTES:
                        kinds[item["key"]] = next(iter(item["value"]))
    return kinds


def test_every_array_the_job_writes_is_named_and_badger_stores_it_as_text(stored: Stored) -> None:
    """Every attribute the job writes as an array is in names.ARRAY_ATTRIBUTES; the memory
    store hands it back as an array, Badger as text (which the reader turns back)."""
    written: set[str] = set()
    for path in stored.files["run-a"].glob("traces-*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            for entry in json.loads(line)["resourceSpans"]:
                for scope in entry["scopeSpans"]:
                    for span in scope["spans"]:
                        items = [*span.get("attributes", [])]
                        for event in span.get("events", []):
                            items += event.get("attributes", [])
                        written |= {i["key"] for i in items if "arrayValue" in i["value"]}
    assert written and written <= names.ARRAY_ATTRIBUTES
    query = urllib.parse.urlencode(
        {
            "query.service_name": stored.service,
            "query.start_time_min": stored.start,
            "query.start_time_max": stored.end,
            "query.num_traces": 10000,
            "query.raw_traces": "true",
        }
    )
    answer = stored.jaeger.get(f"/api/v3/traces?{query}")
    kinds = set(_array_keys(answer["result"]["resourceSpans"]).values())
    assert kinds == {"stringValue" if stored.jaeger.storage == "badger" else "arrayValue"}
