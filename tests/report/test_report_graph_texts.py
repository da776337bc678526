"""Graph texts in the report: `otel-dynamo report --artifacts DIR` writes them out, the
HTML page shows them per compile (linked from the compiles table, found by the filter).
The run is a real job recorded with ``OTEL_DYNAMO_CAPTURE=stacks,values,graphs``."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _report_support import run_chromium, write_small

from otel_dynamo import cli, names
from otel_dynamo.report import GraphTextCollector, load_telemetry, render_html, summarize
from otel_dynamo.report.render.graph_texts import GraphText, GraphTextFiles, graph_texts

JOB = """
import torch

def step(x):
    y = torch.nn.functional.gelu(x @ x.T)
    print("graph break")
    return (y.sin() * 2).sum()

torch.compile(step, backend="aot_eager")(torch.randn(4, 4, requires_grad=True)).backward()
"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real job's telemetry directory: two frame compiles with a backward each."""
    root = tmp_path_factory.mktemp("graphs")
    out = root / "telemetry"
    (root / "job.py").write_text(JOB, encoding="utf-8")
    env = {
        **os.environ,
        "OTEL_DYNAMO_ENABLED": "true",
        "OTEL_DYNAMO_CAPTURE": "stacks,values,graphs",
        "OTEL_DYNAMO_OUTPUT_DIR": str(out),
    }
    subprocess.run([sys.executable, str(root / "job.py")], env=env, check=True, timeout=300)
    return out


@pytest.mark.slow
def test_artifacts_writes_one_file_per_text_named_by_compile_id(
    recorded: Path, tmp_path: Path
) -> None:
    """--artifacts DIR: DIR/<process>/<compile id>/<NN>-<kind>[-graph<i>].py|.txt, each
    file exactly the recorded text; exit 0."""
    target = tmp_path / "artifacts"
    assert cli.main(["report", str(recorded), "--artifacts", str(target)]) == 0
    (process_dir,) = target.iterdir()
    files = {p.relative_to(process_dir).as_posix(): p for p in process_dir.rglob("*.*")}
    expected_per_compile = [
        "00-dynamo_output_graph-graph0.py",
        "01-aot_joint_graph-graph0.py",
        "02-aot_forward_graph-graph0.py",
        "03-aot_backward_graph-graph0.py",
        "04-dynamo_guards.txt",
    ]
    assert sorted(files) == [
        f"{cid}/{name}" for cid in ("0-0", "1-0") for name in expected_per_compile
    ]
    texts = list(graph_texts(load_telemetry([recorded])))
    dynamo = next(t for t in texts if t.compile_id == "0/0" and t.kind == names.GRAPH_TEXT_DYNAMO)
    written = files["0-0/00-dynamo_output_graph-graph0.py"].read_text(encoding="utf-8")
    assert written == dynamo.text
    assert "code: y = torch.nn.functional.gelu(x @ x.T)" in written
    assert oct(files["0-0/04-dynamo_guards.txt"].stat().st_mode & 0o777) == "0o600"


def test_artifacts_into_an_unwritable_place_is_one_message_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--artifacts under a regular file: exit 1, the path named on stderr, no traceback."""
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    job = tmp_path / "job"
    job.mkdir()
    _copy_graph_record(job / "logs.jsonl")
    assert cli.main(["report", str(job), "--artifacts", str(blocker / "sub")]) == 1
    err = capsys.readouterr().err
    assert "cannot write graph texts" in err and "Traceback" not in err


def _copy_graph_record(path: Path) -> None:
    """One hand-written OTLP/JSON log line with a graph text."""
    attributes = [
        {"key": names.ATTR_COMPILE_ID, "value": {"stringValue": "0/0"}},
        {"key": names.ATTR_GRAPH_TEXT_KIND, "value": {"stringValue": names.GRAPH_TEXT_DYNAMO}},
        {"key": names.ATTR_GRAPH_TEXT, "value": {"stringValue": "class GraphModule: ..."}},
        {"key": names.ATTR_GRAPH_TEXT_LENGTH, "value": {"intValue": "22"}},
    ]
    line = {
        "resourceLogs": [
            {
                "resource": {
                    "attributes": [
                        {"key": "host.name", "value": {"stringValue": "h"}},
                        {"key": "process.pid", "value": {"intValue": "7"}},
                    ]
                },
                "scopeLogs": [
                    {
                        "logRecords": [
                            {
                                "timeUnixNano": "1",
                                "eventName": names.LOG_GRAPH_TEXT,
                                "body": {"stringValue": names.LOG_GRAPH_TEXT},
                                "attributes": attributes,
                            }
                        ]
                    }
                ],
            }
        ]
    }
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")


@pytest.mark.slow
def test_page_carries_every_text_per_compile(recorded: Path) -> None:
    """The HTML data: per process, each compile's texts in order, titles with sizes."""
    telemetry = load_telemetry([recorded])
    page = render_html(telemetry, summarize(telemetry))
    collector = GraphTextCollector()
    collector.add(telemetry)
    (process,) = collector.by_process
    data = collector.page_data(process)
    assert [c["compile_id"] for c in data] == ["0/0", "1/0"]
    assert [t["kind"] for t in data[0]["texts"]] == [
        names.GRAPH_TEXT_DYNAMO,
        names.GRAPH_TEXT_AOT_JOINT,
        names.GRAPH_TEXT_AOT_FORWARD,
        names.GRAPH_TEXT_AOT_BACKWARD,
        names.GRAPH_TEXT_GUARDS,
    ]
    assert re.fullmatch(
        r"dynamo_output_graph · graph 0 · [\d,]+ chars", data[0]["texts"][0]["title"]
    )
    assert '"graphs":[{"compile_id":"0/0"' in page


@pytest.mark.slow
def test_page_links_compiles_to_their_graphs_and_filters_them_in_chromium(
    recorded: Path, tmp_path: Path, chromium: str
) -> None:
    """Drawn in Chromium: 10 texts, the compile ids link to their collapsed graphs, and
    #filter=aten.sin leaves only compile 1/0's graphs shown, and the count says so."""
    telemetry = load_telemetry([recorded])
    (tmp_path / "r.html").write_text(render_html(telemetry, summarize(telemetry)), "utf-8")
    url = (tmp_path / "r.html").as_uri() + "#filter=aten.sin"
    dom = run_chromium(chromium, tmp_path / "profile", url, "--dump-dom").stdout
    body = dict(re.findall(r'([\w-]+)="([^"]*)"', re.search(r"<body([^>]*)>", dom).group(1)))
    assert body.get("data-graph-texts") == "10"
    assert '<a href="#graphs-0-0/0">0/0</a>' in html.unescape(dom)
    boxes = re.findall(r'<details class="graphs" id="graphs-0-(\d/0)"( hidden="")?>', dom)
    assert boxes == [("0/0", ' hidden=""'), ("1/0", "")]
    assert re.search(r'id="filter-count">\d+ of \d+ rows match, graphs of 1 of 2 compiles<', dom)


def test_a_run_without_graph_texts_has_no_graphs_section(tmp_path: Path) -> None:
    """Telemetry recorded at the default capture: every process's graphs list is empty."""
    write_small(tmp_path)
    telemetry = load_telemetry([tmp_path])
    page = render_html(telemetry, summarize(telemetry))
    assert '"graphs":[]' in page and '"graphs":[{' not in page


def test_a_cut_text_says_so_at_the_end_of_its_file(tmp_path: Path) -> None:
    """A text cut to 12 of 5,000 characters ends its file with a comment saying so, and
    which variable sets the length; an uncut one ends as it was captured."""
    files = GraphTextFiles(tmp_path)
    common = {"process": "rank 0", "compile_id": "0/0", "graph_index": 0, "path": None}
    cut = GraphText(
        kind="dynamo_output_graph", text="def forward(", length=5000, truncated=True, **common
    )
    whole = GraphText(
        kind="aot_forward_graph", text="def f(): pass", length=13, truncated=False, **common
    )
    files.write(cut)
    files.write(whole)
    first, second = sorted((tmp_path / "rank_0" / "0-0").iterdir())
    assert first.read_text() == (
        "def forward(\n# … cut: 12 of 5,000 characters kept (OTEL_DYNAMO_MAX_GRAPH_TEXT_LENGTH)\n"
    )
    assert second.read_text() == "def f(): pass"


TRAIN_AND_RESTART_JOB = """
import torch

def train_step(x, w):
    return (x @ w).relu().sum()

w = torch.randn(4, 4, requires_grad=True)
torch.compile(train_step, backend="inductor")(torch.randn(4, 4), w).backward()

def clamp(x, low):
    return x.clamp(min=low)

clamped = torch.compile(clamp, backend="aot_eager")
clamped(torch.randn(3), 2.5)
clamped(torch.randn(3), 3.5)  # the float stops being specialized: Dynamo restarts

def with_break(x):
    y = x.sin()
    print("graph break")  # found late: Dynamo restarts before it made any graph
    return y.cos()

torch.compile(with_break, backend="aot_eager")(torch.randn(3))
"""

RESTARTED_AND_BROKEN = {
    "1-0": ["00-dynamo_output_graph-graph0.py", "01-aot_inference_graph-graph0.py"],
    "1-1": [
        "00-dynamo_output_graph-graph0-discarded.py",
        "01-aot_inference_graph-graph0-discarded.py",
        "02-dynamo_output_graph-graph0.py",
        "03-aot_inference_graph-graph0.py",
    ],
    "2-0": ["00-dynamo_output_graph-graph0.py", "01-aot_inference_graph-graph0.py"],
    "3-0": ["00-dynamo_output_graph-graph0.py", "01-aot_inference_graph-graph0.py"],
}
"""The texts of the clamp (compiled, then recompiled with a restart) and of the function
with a graph break (restarted before any graph, then resumed in 3/0), guards left out."""


@pytest.fixture(scope="module")
def artifact_names(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, list[str]]]:
    """The job run twice with one inductor cache (a cold compile, then a cache hit), each
    run's files as ``otel-dynamo report --artifacts`` names them, per compile folder."""
    root = tmp_path_factory.mktemp("artifact_names")
    (root / "job.py").write_text(TRAIN_AND_RESTART_JOB, encoding="utf-8")
    found = {}
    for run in ("cold", "warm"):
        out = root / run / "telemetry"
        env = {
            **os.environ,
            "OTEL_DYNAMO_ENABLED": "true",
            "OTEL_DYNAMO_CAPTURE": "stacks,values,graphs",
            "OTEL_DYNAMO_OUTPUT_DIR": str(out),
            "TORCHINDUCTOR_CACHE_DIR": str(root / "inductor_cache"),
            "TRITON_CACHE_DIR": str(root / "triton_cache"),
        }
        subprocess.run(
            [sys.executable, str(root / "job.py")], env=env, check=True, timeout=300, cwd=root
        )
        target = root / run / "artifacts"
        report = subprocess.run(
            [
                sys.executable,
                "-m",
                "otel_dynamo.cli",
                "report",
                str(out),
                "--artifacts",
                str(target),
            ],
            env=env,
            check=False,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert report.returncode == 0, report.stderr
        (process_dir,) = target.iterdir()
        found[run] = {
            folder.name: sorted(p.name for p in folder.iterdir() if p.suffix == ".py")
            for folder in sorted(process_dir.iterdir())
        }
    return found


@pytest.mark.slow
def test_a_cold_training_compile_names_forward_and_backward_output_code(
    artifact_names: dict[str, dict[str, list[str]]],
) -> None:
    """A training step compiled by inductor from an empty cache: the forward's output code
    says forward (with its graph), the backward's, compiled lazily at .backward(), says
    backward."""
    assert artifact_names["cold"]["0-0"] == [
        "00-dynamo_output_graph-graph0.py",
        "01-aot_joint_graph-graph0.py",
        "02-aot_forward_graph-graph0.py",
        "03-aot_backward_graph-graph0.py",
        "04-inductor_output_code-forward-graph0.py",
        "06-inductor_output_code-backward.py",
    ]


@pytest.mark.slow
def test_a_cached_training_compile_names_forward_and_backward_output_code(
    artifact_names: dict[str, dict[str, list[str]]],
) -> None:
    """The same step loaded from inductor's caches (both codes written during the frame
    compile, with no AOT graph name in progress): forward, then backward."""
    assert artifact_names["warm"]["0-0"] == [
        "00-dynamo_output_graph-graph0.py",
        "01-aot_joint_graph-graph0.py",
        "02-aot_forward_graph-graph0.py",
        "03-aot_backward_graph-graph0.py",
        "04-inductor_output_code-forward-graph0.py",
        "05-inductor_output_code-backward-graph0.py",
    ]


@pytest.mark.slow
def test_texts_of_a_restarted_attempt_are_named_discarded(
    artifact_names: dict[str, dict[str, list[str]]],
) -> None:
    """The recompile Dynamo restarted after AOT Autograd had its graph: that attempt's
    texts end in -discarded, the kept attempt's do not; a graph break's restart, made
    before any graph, leaves nothing discarded."""
    names_by_compile = {
        compile_id: files
        for compile_id, files in artifact_names["cold"].items()
        if compile_id != "0-0"
    }
    assert names_by_compile == RESTARTED_AND_BROKEN
