"""OTEL_DYNAMO_ENABLED, opentelemetry-instrument and otel-dynamo run, in real processes.

The job (tests/programs/compile_job.py) never imports otel_dynamo; the installed
otel_dynamo.pth start-up hook is what turns tracing on.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _export_support import (
    child_environ,
    free_port,
    json_log_records,
    json_metric_names,
    json_spans,
    one_file,
)

from otel_dynamo import names

JOB = Path(__file__).parents[1] / "programs" / "compile_job.py"
TIMEOUT_S = 240


def run(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, check=False, env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S
    )


def run_job(tmp_path: Path, **environ: str) -> subprocess.CompletedProcess:
    env = child_environ(JOB_BACKEND="aot_eager", OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path), **environ)
    return run([sys.executable, str(JOB)], env, tmp_path)


def span_names(tmp_path: Path) -> set[str]:
    return {span["name"] for span in json_spans(one_file(tmp_path, "traces"))}


def test_enabled_variable_traces_a_job_that_never_imports_otel_dynamo(tmp_path):
    """OTEL_DYNAMO_ENABLED=true: frames, graphs, AOT and runs of nn.Module.compile recorded."""
    done = run_job(tmp_path, OTEL_DYNAMO_ENABLED="true")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["torch_preloaded"] is False
    assert {
        names.SPAN_FRAME,
        names.SPAN_GRAPH,
        names.SPAN_AOT_FORWARD,
        names.SPAN_AOT_BACKWARD,
        names.SPAN_RUN_FORWARD,
        names.SPAN_RUN_BACKWARD,
    } <= span_names(tmp_path)


def test_enabled_job_writes_log_events_and_metrics_beside_traces(tmp_path):
    """The embedded default also writes logs-*.jsonl events and metrics-*.jsonl counters."""
    assert run_job(tmp_path, OTEL_DYNAMO_ENABLED="true").returncode == 0
    events = {r.get("eventName") for r in json_log_records(one_file(tmp_path, "logs"))}
    assert {names.LOG_FRAME_COMPILED, names.LOG_GRAPH_COMPILED, names.LOG_GRAPH_BREAK} <= events
    assert {names.METRIC_COMPILES, names.METRIC_RUNS, names.METRIC_GRAPH_BREAKS} <= (
        json_metric_names(one_file(tmp_path, "metrics"))
    )


def test_log_events_point_at_spans_of_the_same_trace(tmp_path):
    """Every exported log event's traceId/spanId is a span in the traces file."""
    assert run_job(tmp_path, OTEL_DYNAMO_ENABLED="true").returncode == 0
    spans = {(s["traceId"], s["spanId"]) for s in json_spans(one_file(tmp_path, "traces"))}
    records = json_log_records(one_file(tmp_path, "logs"))
    assert records and all((r["traceId"], r["spanId"]) in spans for r in records)


@pytest.mark.slow
def test_default_backend_inductor_is_traced(tmp_path):
    """With no backend given, torch's default (inductor) is traced and named on the spans."""
    env = child_environ(OTEL_DYNAMO_ENABLED="true", OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path))
    done = run([sys.executable, str(JOB)], env, tmp_path)
    assert done.returncode == 0, done.stderr
    graphs = [s for s in json_spans(one_file(tmp_path, "traces")) if s["name"] == names.SPAN_GRAPH]
    backends = {
        a["value"]["stringValue"]
        for s in graphs
        for a in s["attributes"]
        if a["key"] == names.ATTR_BACKEND
    }
    assert backends == {"inductor"}


def test_unset_variable_writes_nothing_and_results_match(tmp_path):
    """Without the variable nothing is traced or written, and the job computes the same loss."""
    plain = run_job(tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert list(tmp_path.glob("*.jsonl")) == []
    traced_dir = tmp_path / "traced"
    traced_dir.mkdir()
    traced = run_job(traced_dir, OTEL_DYNAMO_ENABLED="true")
    loss = json.loads(plain.stdout.splitlines()[-1])["loss"]
    assert json.loads(traced.stdout.splitlines()[-1])["loss"] == loss


@pytest.mark.parametrize("enabled", ["", "false", "true"])
def test_interpreter_start_imports_neither_torch_nor_opentelemetry(tmp_path, enabled):
    """At start-up, set or not, the hook imports no torch and no OpenTelemetry module."""
    code = (
        "import sys; print(sorted({m.split('.')[0] for m in sys.modules"
        " if m.startswith(('torch', 'opentelemetry', 'structlog'))}))"
    )
    env = child_environ(OTEL_DYNAMO_ENABLED=enabled)
    done = run([sys.executable, "-c", code], env, tmp_path)
    assert done.stdout.strip() == "[]", done.stderr


COSTLY_IMPORTS = ("opentelemetry.instrumentation", "opentelemetry.propagate", "structlog")
"""Modules a traced job does not need: together ~80 ms at every start (the propagators scan
every installed distribution's entry points; structlog brings rich and pygments). wrapt,
which the taps patch with, costs ~2 ms once torch is loaded and is not among them."""


FINDERS_OF_OTEL_DYNAMO = (
    "print(sorted(m for m in sys.modules if m.startswith('otel_dynamo')));"
    " print([type(f).__module__ for f in sys.meta_path if"
    " type(f).__module__.startswith('otel_dynamo')])"
)
"""Prints the otel_dynamo modules loaded, then the modules of otel_dynamo's finders on
``sys.meta_path``."""


@pytest.mark.parametrize("enabled", ["", "false", " Off "])
def test_interpreter_start_with_tracing_off_imports_nothing_of_otel_dynamo(tmp_path, enabled):
    """With tracing off, the .pth line loads no otel_dynamo module and puts nothing on
    sys.meta_path."""
    code = f"import sys; {FINDERS_OF_OTEL_DYNAMO}"
    done = run([sys.executable, "-c", code], child_environ(OTEL_DYNAMO_ENABLED=enabled), tmp_path)
    assert done.stdout.splitlines() == ["[]", "[]"], done.stderr


def test_interpreter_start_with_tracing_on_waits_for_torch_with_one_finder(tmp_path):
    """With tracing on, the start-up hook loads its modules and puts one finder of its own
    on sys.meta_path, which waits for torch."""
    code = f"import sys; {FINDERS_OF_OTEL_DYNAMO}"
    done = run([sys.executable, "-c", code], child_environ(OTEL_DYNAMO_ENABLED="1"), tmp_path)
    loaded, finders = done.stdout.splitlines()
    assert "'otel_dynamo._enablement.startup'" in loaded, done.stderr
    assert finders == "['otel_dynamo._enablement.import_hooks']"


@pytest.mark.parametrize("enabled", [None, "", "no"])
def test_the_pth_line_with_tracing_off_loads_no_module_at_all(tmp_path, enabled):
    """In ``python -S`` with only what site has loaded before .pth lines, running the
    installed line with OTEL_DYNAMO_ENABLED unset or false adds no module to sys.modules
    and leaves sys.meta_path as it was."""
    from otel_dynamo._enablement.startup import installed_startup_hook

    line = installed_startup_hook().read_text()
    code = (
        "import os, sys; before = (set(sys.modules), list(sys.meta_path)); "
        f"exec({line!r}); "
        "print(sorted(set(sys.modules) - before[0]), sys.meta_path == before[1])"
    )
    env = child_environ()
    env.pop("OTEL_DYNAMO_ENABLED", None)
    if enabled is not None:
        env["OTEL_DYNAMO_ENABLED"] = enabled
    done = run([sys.executable, "-S", "-c", code], env, tmp_path)
    assert done.stdout.strip() == "[] True", done.stderr


@pytest.mark.parametrize(("enabled", "said"), [("", ""), ("true", "tracing is off")])
def test_a_pth_left_without_its_package_never_breaks_the_interpreter(tmp_path, enabled, said):
    """The .pth line where otel_dynamo cannot be imported (an editable install whose
    checkout is gone): no traceback, the interpreter runs; with OTEL_DYNAMO_ENABLED set,
    one line says tracing is off."""
    from otel_dynamo._enablement.startup import PTH_NAME, installed_startup_hook

    site_dir = tmp_path / "site"
    site_dir.mkdir()
    (site_dir / PTH_NAME).write_text(installed_startup_hook().read_text())
    code = f"import site; site.addsitedir({str(site_dir)!r}); print('ran')"
    env = child_environ(OTEL_DYNAMO_ENABLED=enabled)
    env.pop("PYTHONPATH")  # with -S, nothing makes otel_dynamo importable
    done = run([sys.executable, "-S", "-c", code], env, tmp_path)
    assert (done.returncode, done.stdout.strip()) == (0, "ran")
    assert "Traceback" not in done.stderr and said in done.stderr
    assert done.stderr.count("\n") == (1 if said else 0)


def test_a_traced_compile_imports_nothing_it_does_not_need(tmp_path):
    """Enabled by environment, a compile and a run import none of COSTLY_IMPORTS (an
    import of opentelemetry.instrumentation.utils once cost a Llama job 0.13 s of CPU)."""
    code = (
        "import sys, torch; torch.compile(lambda x: x + 1, backend='eager')(torch.ones(2));"
        f" print(sorted(m for m in sys.modules if m.startswith({COSTLY_IMPORTS!r})))"
    )
    env = child_environ(OTEL_DYNAMO_ENABLED="true", OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path))
    done = run([sys.executable, "-c", code], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_startup_hook_is_installed_in_site_packages():
    """otel_dynamo.pth is where site processes it (the package install put it there),
    and it is the line startup.pth_line makes."""
    from otel_dynamo._enablement.startup import PTH_NAME, installed_startup_hook, pth_line

    hook = installed_startup_hook()
    assert hook is not None and hook.name == PTH_NAME
    assert hook.read_text() == pth_line()


def test_the_shipped_pth_line_is_the_one_startup_makes():
    """The checkout's otel_dynamo.pth (what hatchling installs) is exactly
    startup.pth_line(): the variable's name and its false spellings come from settings."""
    from otel_dynamo._enablement.startup import PTH_NAME, pth_line

    shipped = Path(__file__).parents[2] / PTH_NAME
    assert shipped.read_text() == pth_line(), (
        "regenerate it: python -c 'from otel_dynamo._enablement.startup import pth_line;"
        f' open({PTH_NAME!r}, "w").write(pth_line())\''
    )


def test_bad_value_gets_one_message_naming_variable_value_and_accepted(tmp_path):
    """OTEL_DYNAMO_RUN_SPANS=sometimes: one warning line, and the job still runs traced."""
    done = run_job(tmp_path, OTEL_DYNAMO_ENABLED="true", OTEL_DYNAMO_RUN_SPANS="sometimes")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "OTEL_DYNAMO_RUN_SPANS" in line]
    assert len(lines) == 1
    assert "'sometimes' is not valid; accepted: " in lines[0] and "first:N" in lines[0]
    assert names.SPAN_FRAME in span_names(tmp_path)


def test_strict_mode_stops_at_start_with_the_message(tmp_path):
    """OTEL_DYNAMO_STRICT=true turns the bad value into exit status 2 before the job runs."""
    done = run_job(
        tmp_path,
        OTEL_DYNAMO_ENABLED="true",
        OTEL_DYNAMO_STRICT="true",
        OTEL_DYNAMO_RUN_SPANS="sometimes",
    )
    assert done.returncode == 2
    assert "OTEL_DYNAMO_RUN_SPANS='sometimes' is not valid" in done.stderr
    assert done.stdout == ""


def test_strict_mode_checks_standard_variables_at_start(tmp_path):
    """A malformed OTEL_EXPORTER_OTLP_ENDPOINT stops a strict job at start, naming it."""
    done = run_job(
        tmp_path,
        OTEL_DYNAMO_ENABLED="true",
        OTEL_DYNAMO_STRICT="true",
        OTEL_EXPORTER_OTLP_ENDPOINT="not a url",
    )
    assert done.returncode == 2
    assert "OTEL_EXPORTER_OTLP_ENDPOINT='not a url' is not valid" in done.stderr


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("OTEL_DYNAMO_REPRO_DIR", "/proc/nope", "OTEL_DYNAMO_REPRO_DIR='/proc/nope' is not valid"),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            "team=ml,broken",
            "OTEL_RESOURCE_ATTRIBUTES='team=ml,broken' is not valid",
        ),
        ("OTEL_DYNAMO_SHUTDOWN_TIMEOUT", "inf", "OTEL_DYNAMO_SHUTDOWN_TIMEOUT='inf' is not valid"),
        ("OTEL_METRIC_EXPORT_INTERVAL", "inf", "OTEL_METRIC_EXPORT_INTERVAL='inf' is not valid"),
    ],
)
def test_strict_mode_stops_on_every_kind_of_bad_value(tmp_path, variable, value, said):
    """An unusable repro directory, a malformed resource list, an infinite duration: each
    stops a strict job at start (exit 2) with the message naming variable and value."""
    done = run_job(
        tmp_path, OTEL_DYNAMO_ENABLED="true", OTEL_DYNAMO_STRICT="true", **{variable: value}
    )
    assert done.returncode == 2, done.stderr
    assert said in done.stderr
    assert done.stdout == ""


def test_unwritable_output_directory_warns_and_job_runs(tmp_path):
    """An output directory that cannot be written: one message, the job's result unharmed."""
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    env = child_environ(
        JOB_BACKEND="aot_eager",
        OTEL_DYNAMO_ENABLED="true",
        OTEL_DYNAMO_OUTPUT_DIR=str(blocker / "sub"),
    )
    done = run([sys.executable, str(JOB)], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert sum("OTEL_DYNAMO_OUTPUT_DIR" in line for line in done.stderr.splitlines()) == 1
    assert "loss" in done.stdout


def test_opentelemetry_instrument_loads_the_instrumentor(tmp_path):
    """``opentelemetry-instrument python job.py`` traces compiles through the entry point."""
    env = child_environ(JOB_BACKEND="aot_eager", OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path))
    instrument = Path(sys.executable).with_name("opentelemetry-instrument")
    command = [str(instrument) if instrument.exists() else "opentelemetry-instrument"]
    done = run([*command, sys.executable, str(JOB)], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert names.SPAN_FRAME in span_names(tmp_path)


def test_otel_dynamo_run_command_enables_tracing(tmp_path):
    """``otel-dynamo run --out DIR -- python job.py`` traces the job into DIR."""
    env = child_environ(JOB_BACKEND="aot_eager")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "otel_dynamo", "run", "--out", str(out), "--"]
    done = run([*command, sys.executable, str(JOB)], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert names.SPAN_RUN_BACKWARD in span_names(out)


def test_otel_dynamo_run_without_command_explains_usage(tmp_path):
    """``otel-dynamo run`` alone exits 2 with a usage hint."""
    done = run([sys.executable, "-m", "otel_dynamo", "run"], child_environ(), tmp_path)
    assert done.returncode == 2
    assert "give a command" in done.stderr


@pytest.mark.slow
def test_torchrun_two_ranks_each_write_their_own_rank(tmp_path):
    """torchrun --nproc-per-node 2 (gloo): each rank traces into its own files, tagged rank 0/1."""
    env = child_environ(
        JOB_BACKEND="aot_eager", OTEL_DYNAMO_ENABLED="true", OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path)
    )
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2"]
    command += ["--master-port", str(free_port()), str(JOB), "--ddp"]
    done = run(command, env, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    traces = sorted(tmp_path.glob("traces-*.jsonl"))
    assert len(traces) == 2
    ranks = set()
    for path in traces:
        spans = json_spans(path)
        assert any(span["name"] == names.SPAN_FRAME for span in spans)
        resources = {
            (s["resource"][names.RESOURCE_RANK], s["resource"][names.RESOURCE_WORLD_SIZE])
            for s in spans
        }
        assert len(resources) == 1
        ranks |= resources
    assert ranks == {(0, 2), (1, 2)}
    events = [r for path in tmp_path.glob("logs-*.jsonl") for r in json_log_records(path)]
    assert {
        a["value"]["intValue"]
        for r in events
        for a in r["attributes"]
        if a["key"] == names.RESOURCE_RANK
    } == {"0", "1"}


def test_forked_dataloader_workers_neither_duplicate_nor_hang(tmp_path):
    """DataLoader workers forked from a traced job: it finishes, spans are written once."""
    env = child_environ(OTEL_DYNAMO_ENABLED="true", OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path))
    job = Path(__file__).parents[1] / "programs" / "dataloader_job.py"
    done = run([sys.executable, str(job)], env, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(list(tmp_path.glob("traces-*.jsonl"))) == 1
    spans = json_spans(one_file(tmp_path, "traces"))
    ids = [span["spanId"] for span in spans]
    assert len(ids) == len(set(ids))
    assert sum(span["name"] == names.SPAN_FRAME for span in spans) >= 1


def test_dataloader_workers_that_compile_write_their_own_telemetry(tmp_path):
    """Workers end with os._exit, skipping atexit: each flushes first, so every worker's
    compile is on disk, in its own file, with its own process.pid."""
    env = child_environ(OTEL_DYNAMO_ENABLED="true", OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path))
    job = Path(__file__).parents[1] / "programs" / "dataloader_job.py"
    done = run([sys.executable, str(job), "--compile-in-workers"], env, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    pids_with_frames = set()
    for path in tmp_path.glob("traces-*.jsonl"):
        for span in json_spans(path):
            if span["name"] == names.SPAN_FRAME:
                pids_with_frames.add(span["resource"]["process.pid"])
    assert len(pids_with_frames) == 5  # the job, and two workers in each of two epochs


def test_strict_mode_stops_at_start_on_an_unwritable_output_directory(tmp_path):
    """Strict: an output directory that cannot be made stops the process, naming it and why."""
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    env = child_environ(
        OTEL_DYNAMO_ENABLED="true",
        OTEL_DYNAMO_STRICT="true",
        OTEL_DYNAMO_OUTPUT_DIR=str(blocker / "sub"),
    )
    done = run([sys.executable, "-c", "print('job ran')"], env, tmp_path)
    assert done.returncode == 2 and "job ran" not in done.stdout
    assert f"OTEL_DYNAMO_OUTPUT_DIR='{blocker / 'sub'}' is not valid (" in done.stderr


@pytest.mark.parametrize("listed", ["torch_compile", "requests, torch_compile", "*"])
def test_disabled_instrumentations_switch_the_startup_hook_off(tmp_path, listed):
    """OTEL_PYTHON_DISABLED_INSTRUMENTATIONS naming our entry point (or *), read as
    opentelemetry-instrument reads it: the enabled job runs untraced, no telemetry files."""
    done = run_job(
        tmp_path, OTEL_DYNAMO_ENABLED="true", OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=listed
    )
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.glob("*.jsonl")) == []


def test_other_disabled_instrumentations_leave_the_startup_hook_on(tmp_path):
    """A list naming only other instrumentations changes nothing: the job is traced."""
    done = run_job(
        tmp_path, OTEL_DYNAMO_ENABLED="true", OTEL_PYTHON_DISABLED_INSTRUMENTATIONS="requests"
    )
    assert done.returncode == 0, done.stderr
    assert names.SPAN_FRAME in span_names(tmp_path)


def test_startup_names_the_entry_point_the_package_declares():
    """The name the start-up hook checks is the installed opentelemetry_instrumentor entry
    point's."""
    from importlib.metadata import entry_points

    from otel_dynamo._enablement.startup import INSTRUMENTOR_ENTRY_POINT

    declared = {
        ep.name
        for ep in entry_points(group="opentelemetry_instrumentor")
        if ep.value.startswith("otel_dynamo.")
    }
    assert declared == {INSTRUMENTOR_ENTRY_POINT}


def test_perfetto_trace_of_a_real_training_job(tmp_path):
    """A real traced training job, then report --perfetto: its frame compiles and lazy
    backward compiles are slices on the track of the thread that compiled them (the main
    thread, named so), its graph break an instant on that track."""
    assert run_job(tmp_path, OTEL_DYNAMO_ENABLED="true").returncode == 0
    out = tmp_path / "trace.json"
    done = run(
        [sys.executable, "-m", "otel_dynamo.cli", "report", str(tmp_path), "--perfetto", str(out)],
        child_environ(),
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    events = json.loads(out.read_text())["traceEvents"]
    frames = [e for e in events if e["ph"] == "X" and e["cat"] == names.SPAN_FRAME]
    lazy = [e for e in events if e["ph"] == "X" and e["cat"] == names.SPAN_LAZY_BACKWARD]
    threads = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert frames and lazy
    (main,) = {e["tid"] for e in frames + lazy}
    assert main == frames[0]["args"][names.ATTR_THREAD_ID]
    assert threads[main] == f"MainThread ({main})"
    breaks = [e for e in events if e["ph"] == "i" and e["name"].startswith("graph break")]
    assert breaks and {e["tid"] for e in breaks} == {main}


def test_diff_of_the_same_real_job_run_twice_passes_the_gate(tmp_path):
    """Two real traced runs of one training job: diff finds the same compiles, graphs,
    breaks and recompiles (counts equal, nothing new or gone) and the CI gate passes."""
    for run_dir in ("base", "new"):
        (tmp_path / run_dir).mkdir()
        assert run_job(tmp_path / run_dir, OTEL_DYNAMO_ENABLED="true").returncode == 0
    command = [
        sys.executable,
        "-m",
        "otel_dynamo.cli",
        "diff",
        str(tmp_path / "base"),
        str(tmp_path / "new"),
        "--json",
        "--fail-on",
        "new_graph_breaks>0",
        "--fail-on",
        "recompiles>+0",
    ]
    done = run(command, child_environ(), tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    diff = json.loads(done.stdout)
    for key in ("frame_compiles", "graphs", "ops", "graph_breaks", "recompiles", "failures"):
        assert diff["totals"][key]["change"] == 0, key
    assert diff["totals"]["graph_breaks"]["new"] >= 1
    assert diff["graph_breaks"] == {"new": [], "gone": [], "changed": []}
