"""CUDA-graph decisions and compile-cache lookups, recorded from real inductor compiles
on the CPU and held to torch's own counters (``torch._dynamo.utils.counters``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from _export_support import child_environ
from _telemetry_support import Signals
from torch._dynamo.utils import counters

from otel_dynamo import names

pytestmark = pytest.mark.torch_facing


def _mutating(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    y.add_(1)
    return (x * 2).sin() + y


@pytest.fixture
def fresh_inductor_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cold inductor cache of the test's own (compiles are real compiles)."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    torch._dynamo.reset()
    counters.clear()
    return tmp_path / "inductor"


def _skips(signals: Signals) -> list[Any]:
    return [
        span
        for span in signals.finished()
        if span.attributes.get(names.ATTR_CUDAGRAPH_DECISION) == names.CUDAGRAPH_SKIPPED
    ]


def test_reduce_overhead_on_cpu_tensors_records_torchs_skip(fresh_inductor_cache: Path) -> None:
    """mode="reduce-overhead" on CPU tensors: one skip on the graph span, with torch's
    reason in the words torch states it on CUDA, as many as torch counted, in category
    cpu_device (CUDA graphs need CUDA, whatever the text names)."""
    signals = Signals()
    compiled = torch.compile(_mutating, backend=signals.traced("inductor"), mode="reduce-overhead")
    x, y = torch.randn(8, requires_grad=True), torch.randn(8)
    compiled(x, y).sum().backward()
    (span,) = _skips(signals)
    assert counters["inductor"]["cudagraph_skips"] == 1
    assert span.name == names.SPAN_GRAPH
    reason = span.attributes[names.ATTR_CUDAGRAPH_SKIP_REASON]
    assert isinstance(reason, str)
    assert reason.startswith("skipping cudagraphs due to ")
    assert len(reason) > len("skipping cudagraphs due to ")  # torch's own reason follows
    assert span.attributes[names.ATTR_CUDAGRAPH_SKIP_CATEGORY] == "cpu_device"


def test_a_warm_cpu_skip_is_still_a_cpu_device_skip(fresh_inductor_cache: Path) -> None:
    """The same CPU graph compiled again from inductor's caches (after
    ``torch._dynamo.reset()``): still one skip in category cpu_device, with a reason in
    words, never "not stated by torch"."""
    for _ in range(2):
        signals = Signals()
        compiled = torch.compile(
            _mutating, backend=signals.traced("inductor"), mode="reduce-overhead"
        )
        compiled(torch.randn(8), torch.randn(8))
        (span,) = _skips(signals)
        assert span.attributes[names.ATTR_CUDAGRAPH_SKIP_CATEGORY] == "cpu_device"
        assert span.attributes[names.ATTR_CUDAGRAPH_SKIP_REASON] != "not stated by torch"
        torch._dynamo.reset()


def test_a_skip_is_a_log_event_and_a_metric_point(fresh_inductor_cache: Path) -> None:
    """The skip is also a torch.compile.cudagraph_skipped log event (compile id, kind,
    when decided) and counted by decision and category."""
    signals = Signals()
    compiled = torch.compile(_mutating, backend=signals.traced("inductor"), mode="reduce-overhead")
    compiled(torch.randn(8), torch.randn(8))
    (event,) = signals.events(names.LOG_CUDAGRAPH_SKIPPED)
    assert event[names.ATTR_COMPILE_ID] == "0/0"
    assert event[names.ATTR_RUN_KIND] == names.RUN_KIND_INFERENCE
    assert event[names.ATTR_CUDAGRAPH_AT] == names.CUDAGRAPH_AT_COMPILE
    category = event[names.ATTR_CUDAGRAPH_SKIP_CATEGORY]
    expected = {
        names.ATTR_CUDAGRAPH_DECISION: names.CUDAGRAPH_SKIPPED,
        names.ATTR_CUDAGRAPH_SKIP_CATEGORY: category,
    }
    assert signals.points(names.METRIC_CUDAGRAPH_GRAPHS) == [(expected, 1)]


def test_without_cuda_graphs_asked_for_nothing_is_decided(fresh_inductor_cache: Path) -> None:
    """The default mode asks for no CUDA graphs: no decision on any span, no metric."""
    signals = Signals()
    compiled = torch.compile(_mutating, backend=signals.traced("inductor"))
    compiled(torch.randn(8), torch.randn(8))
    assert not any(names.ATTR_CUDAGRAPH_DECISION in span.attributes for span in signals.finished())
    assert signals.points(names.METRIC_CUDAGRAPH_GRAPHS) == []


def test_an_fx_graph_cache_bypass_records_torchs_reason(
    fresh_inductor_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A graph the FX graph cache cannot take (an unsupported post-grad pass) is a bypass:
    its state and torch's reason on the compile step span, a log event, the frame's
    bypass count equal to torch's counter."""
    import torch._inductor.config as inductor_config

    monkeypatch.setattr(inductor_config, "post_grad_custom_post_pass", lambda graph: None)
    signals = Signals()
    compiled = torch.compile(lambda x: (x * 2).sin(), backend=signals.traced("inductor"))
    compiled(torch.randn(4))
    assert counters["inductor"]["fxgraph_cache_bypass"] == 1
    (step,) = [
        span
        for span in signals.finished()
        if span.attributes.get(names.ATTR_CACHE_FX_STATE) == names.CACHE_BYPASS
    ]
    reason = step.attributes[names.ATTR_CACHE_BYPASS_REASON]
    assert "post grad custom pass" in reason.lower()
    (frame,) = [span for span in signals.finished() if span.name == names.SPAN_FRAME]
    assert frame.attributes[names.ATTR_CACHE_FX_BYPASSES] == 1
    (event,) = [
        event
        for event in signals.events(names.LOG_CACHE_BYPASSED)
        if event[names.ATTR_CACHE_NAME] == names.CACHE_INDUCTOR_FX
    ]
    assert event[names.ATTR_CACHE_BYPASS_REASON] == reason
    assert event[names.ATTR_COMPILE_ID] == "0/0"


def test_a_lazy_backwards_cache_miss_is_on_its_span(fresh_inductor_cache: Path) -> None:
    """The FX graph cache lookup of a backward compiled at its first .backward() counts on
    the lazy backward span: frame and lazy backward together equal torch's misses."""
    signals = Signals()
    compiled = torch.compile(lambda x: (x * 2).sin().sum(), backend=signals.traced("inductor"))
    compiled(torch.randn(4, requires_grad=True)).backward()
    spans = signals.finished()
    (frame,) = [span for span in spans if span.name == names.SPAN_FRAME]
    (lazy,) = [span for span in spans if span.name == names.SPAN_LAZY_BACKWARD]
    recorded = frame.attributes.get(names.ATTR_CACHE_FX_MISSES, 0) + lazy.attributes.get(
        names.ATTR_CACHE_FX_MISSES, 0
    )
    assert lazy.attributes[names.ATTR_CACHE_FX_MISSES] == 1
    assert recorded == counters["inductor"]["fxgraph_cache_miss"] == 2


WARM_START = """
import json, sys, torch
sys.path.insert(0, {tests!r})
from torch._dynamo.utils import counters
from _telemetry_support import Signals
from otel_dynamo import names
signals = Signals()
compiled = torch.compile(lambda x: (x * 2).sin().sum(), backend=signals.traced("inductor"))
compiled(torch.randn(4, requires_grad=True)).backward()
lookups = {{}}
for attributes, value in signals.points(names.METRIC_CACHE_LOOKUPS):
    key = attributes[names.ATTR_CACHE_NAME] + "." + attributes[names.ATTR_CACHE_STATE]
    lookups[key] = value
print(json.dumps({{"lookups": lookups, "inductor": dict(counters["inductor"]),
                  "aot": dict(counters["aot_autograd"])}}))
"""


@pytest.mark.slow
def test_a_warm_start_records_the_hits_torch_counts(tmp_path: Path) -> None:
    """A second process on the first one's inductor cache: its cache lookups metric
    counts exactly the FX graph and AOT Autograd hits torch counted."""
    program = WARM_START.format(tests=str(Path(__file__).resolve().parents[1]))
    environ = child_environ(TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"))
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", program],
                env=environ,
                capture_output=True,
                text=True,
                timeout=300,
                check=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        for _ in range(2)
    ]
    cold, warm = runs
    assert cold["lookups"].get("inductor_fx.miss") == cold["inductor"]["fxgraph_cache_miss"]
    assert warm["lookups"]["inductor_fx.hit"] == warm["inductor"]["fxgraph_cache_hit"] >= 1
    assert warm["lookups"].get("aot_autograd.hit", 0) == warm["aot"].get("autograd_cache_hit", 0)
    assert "inductor_fx.miss" not in warm["lookups"]


WARM_JOB = """
import json, torch
from torch._dynamo.utils import counters
compiled = torch.compile(lambda x: (x * 2).sin().sum(), backend="inductor")
compiled(torch.randn(4, requires_grad=True)).backward()
hits = counters["inductor"]["fxgraph_cache_hit"] + counters["aot_autograd"]["autograd_cache_hit"]
misses = (
    counters["inductor"]["fxgraph_cache_miss"] + counters["aot_autograd"]["autograd_cache_miss"]
)
print(json.dumps({"hits": hits, "misses": misses}))
"""


def _split_of_a_run(tmp_path: Path, out: str, environ: dict[str, str]) -> tuple[Any, Any]:
    """torch's cache counters as the job printed them, and the report's compile_time."""
    from otel_dynamo.report import load_telemetry, summarize

    job = tmp_path / "job.py"
    job.write_text(WARM_JOB, encoding="utf-8")
    command = [sys.executable, "-m", "otel_dynamo", "run", "--out", str(tmp_path / out)]
    done = subprocess.run(
        [*command, "--", sys.executable, str(job)],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    counted = json.loads(done.stdout.strip().splitlines()[-1])
    telemetry = load_telemetry([tmp_path / out])
    return counted, summarize(telemetry)["compile_time"]


@pytest.mark.slow
@pytest.mark.parametrize("aot_autograd_cache", ["1", "0"])
def test_a_warm_rerun_is_loading_from_cache_not_compiling(
    tmp_path: Path, aot_autograd_cache: str
) -> None:
    """The same job twice on one inductor cache (with and without AOT Autograd's cache):
    the warm run's split has loading-from-cache time and no backend compile, and its
    cold/warm table counts the hits and misses torch counted, in each run."""
    environ = child_environ(
        TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"),
        TORCHINDUCTOR_AUTOGRAD_CACHE=aot_autograd_cache,
    )
    (cold_counts, cold), (warm_counts, warm) = (
        _split_of_a_run(tmp_path, out, environ) for out in ("cold", "warm")
    )
    steps = {row["step"]: row["seconds"] for row in warm["steps"]}
    phases = {row["phase"]: row["seconds"] for row in warm["phases"]}
    cold_steps = {row["step"]: row["seconds"] for row in cold["steps"]}
    assert (warm_counts["misses"], warm_counts["hits"] >= 1) == (0, True)
    assert (phases["cache_load"] > 0, steps.get("backend.compile", 0.0)) == (True, 0.0)
    assert cold_steps["backend.compile"] > 0
    assert (cold["cache"]["cache_hits"], cold["cache"]["cache_misses"]) == (
        cold_counts["hits"],
        cold_counts["misses"],
    )
    assert (warm["cache"]["cache_hits"], warm["cache"]["cache_misses"]) == (
        warm_counts["hits"],
        warm_counts["misses"],
    )
    assert (warm["cache"]["warm_compiles"], warm["cache"]["cold_compiles"]) == (1, 0)
