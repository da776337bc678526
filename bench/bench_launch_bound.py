"""Steady-state cost of tracing on a launch-bound training step: traced / plain, fresh processes.

    python bench/bench_launch_bound.py [--pairs 12] [--steps 4000] [--block 50]
                                       [--backend inductor|aot_eager]
                                       [--mode default|reduce-overhead] [--cold-cache] [--aa]
    python bench/bench_launch_bound.py --child [...]   # one process: prints one JSON line

Measures what tracing adds to each step of a training loop once compiling is over, where a
step is many small operations (what a GPU step is when it is launch-bound): 4 blocks of
Linear + LayerNorm + GELU with a residual, width 32, batch 8, an MSE loss, trained with
AdamW (``foreach=False``: a dozen small ops per parameter) under ``torch.compile`` (inductor
by default; ``--backend aot_eager``, ``--mode reduce-overhead``), one torch thread. About
1.1 ms a step on a quiet core here. Target: traced / plain <= 1.01x.

A child process builds the model, compiles it (first step), runs warm-up steps to a
recompile-free steady state, then times each steady step with ``time.perf_counter_ns`` and
prints one JSON line: step-time statistics (median, mean, trimmed mean, percentiles, slow
steps, medians of consecutive windows), and what else happened in the process while it
timed: compiles (must be 0), collections and their pauses (``gc.callbacks``), page faults
and context switches (``getrusage``), and each thread's CPU time and times scheduled
(``/proc/self/task/*/schedstat``), named from ``threading.enumerate()``.

The parent runs pairs of fresh child processes, plain and traced, alternating which one
leads (ABBA). Both of a pair share a random ``PYTHONHASHSEED``; each gets its own inductor
cache directory in a temporary directory, a copy of one filled by an untimed plain run
first, so compiling takes seconds (``--cold-cache``: an empty one, about 13 s more per
process here). The traced one has ``OTEL_DYNAMO_ENABLED=true`` and
``OTEL_DYNAMO_OUTPUT_DIR`` in that temporary directory (the default file export) and must
write a trace file there. The two start together, compile and warm up, then take turns:
one times ``--block`` steps while the other waits on a pipe, in ABBA order, until each has
timed ``--steps``. A pair's ratio is the median over turns of traced / plain block medians
(two blocks timed one right after the other see the same load; ``--block 0`` runs the two
processes one after the other instead and divides their whole runs' medians). Printed:
each pair's ratio, the median over pairs with a bootstrap 95 % confidence interval,
whether the 1.01x goal is met and whether the interval is narrow enough (half-width
<= 1 %) to say so. ``--aa`` makes both processes of a pair plain: the method's noise floor.
``--traced-env NAME=VALUE`` sets variables for the traced process only (what costs what).

``bench/bench_gpu.py`` runs the same step on CUDA with this parent.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import importlib
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from types import MappingProxyType
from typing import Any, NoReturn

GOAL_RATIO = 1.01
"""Steady-state traced / plain step time the issue asks for."""
RESOLUTION = 0.01
"""Largest confidence-interval half-width (relative) at which the verdict counts."""
CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0
MIN_PAIRS_FOR_INTERVAL = 5
"""Fewer pairs than this give no confidence interval worth printing."""

DEFAULT_PAIRS = 12
DEFAULT_BLOCKS = 4
DEFAULT_WIDTH = 32
DEFAULT_BATCH = 8
DEFAULT_WARMUP_STEPS = 300
"""Past the compile, the first runs' spans (1, 2, 3, 4, 8, ... 256 are recorded by the
default policy) and allocator warm-up."""
DEFAULT_STEPS = 4_000
DEFAULT_THREADS = 1
"""torch's intra-op threads in a child. A launch-bound step gains nothing from them, and on a
small shared machine they cost: with 2 threads on 2 cores, every parallel region waits for
a core another process holds (40 ms steps instead of 0.8 ms here while one core was busy)."""
DEFAULT_BACKEND = "inductor"
DEFAULT_MODE = "default"
MODES = ("default", "reduce-overhead", "max-autotune-no-cudagraphs")
TRIM_FRACTION = 0.1
"""Trimmed mean: this fraction of steps dropped at each end."""
SLOW_STEP_FACTOR = 2.0
"""A step counts as slow when it takes this many times the median."""
WINDOWS = 8
"""Timed steps are also summarised as the medians of this many consecutive windows."""
CHILD_TIMEOUT_S = 900
MAX_HASH_SEED = 4294967295
SCRUBBED_ENV_PREFIXES = ("OTEL_", "TORCH_TRACE", "TORCH_LOGS", "TORCHINDUCTOR_CACHE_DIR")
JSON_PREFIX = "LAUNCH_BOUND "
"""The child's result line starts with this (torch may print to stdout too)."""
READY_LINE = "LAUNCH_BOUND_READY"
BLOCK_PREFIX = "LAUNCH_BOUND_BLOCK "
IMPORT_VARIABLE = "LAUNCH_BOUND_IMPORT"
"""Modules a child imports before it builds the step (comma-separated): to see what their
mere presence costs a plain process."""
DEFAULT_BLOCK = 50
"""Steps a process times in one turn (``--block 0``: one process after the other). Short
turns, so that the two blocks of a turn see the same load: on the shared 2-core machine
block medians jump between about 1.2 and 1.9 ms within a second as other jobs come and go."""

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]


@dataclasses.dataclass(frozen=True, kw_only=True)
class StepConfig:
    """The training step a child times, and how long it times it."""

    device: str = "cpu"
    backend: str = DEFAULT_BACKEND
    mode: str = DEFAULT_MODE
    blocks: int = DEFAULT_BLOCKS
    width: int = DEFAULT_WIDTH
    batch: int = DEFAULT_BATCH
    warmup_steps: int = DEFAULT_WARMUP_STEPS
    steps: int = DEFAULT_STEPS
    foreach: bool = False
    threads: int = DEFAULT_THREADS

    def child_args(self) -> list[str]:
        return [
            "--device", self.device,
            "--backend", self.backend,
            "--mode", self.mode,
            "--blocks", str(self.blocks),
            "--width", str(self.width),
            "--batch", str(self.batch),
            "--warmup-steps", str(self.warmup_steps),
            "--steps", str(self.steps),
            "--threads", str(self.threads),
            *(["--foreach"] if self.foreach else []),
        ]  # fmt: skip


# --- the child: one process, one steady state ------------------------------------------------


def build_step(config: StepConfig) -> Callable[[], Any]:
    """One training step of the launch-bound model, compiled (the first call compiles)."""
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = nn.Linear(config.width, config.width)
            self.norm = nn.LayerNorm(config.width)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + nn.functional.gelu(self.norm(self.linear(x)))

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.blocks = nn.Sequential(*(Block() for _ in range(config.blocks)))
            self.head = nn.Linear(config.width, 1)

        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return nn.functional.mse_loss(self.head(self.blocks(x)), y)

    torch.set_num_threads(config.threads)
    torch.manual_seed(0)
    model = Model().to(config.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=config.foreach)
    mode = None if config.mode == DEFAULT_MODE else config.mode
    compiled = torch.compile(model, backend=config.backend, mode=mode)
    x = torch.randn(config.batch, config.width, device=config.device)
    y = torch.randn(config.batch, 1, device=config.device)
    mark_step = (
        torch.compiler.cudagraph_mark_step_begin
        if config.mode == "reduce-overhead"
        else lambda: None
    )

    def step() -> None:  # no .item(), no sync: the host only queues work on a GPU
        mark_step()
        compiled(x, y).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


@dataclasses.dataclass
class Timed:
    """What timing some steps gave: per-step ns, the loop's wall ns, and on CUDA the host's
    own per-step ns and the synchronization warnings seen."""

    samples: list[int] = dataclasses.field(default_factory=list)
    wall_ns: int = 0
    host: list[int] = dataclasses.field(default_factory=list)
    sync_warnings: int = 0

    def add(self, other: Timed) -> None:
        self.samples += other.samples
        self.wall_ns += other.wall_ns
        self.host += other.host
        self.sync_warnings += other.sync_warnings


def time_cpu_steps(step: Callable[[], Any], steps: int) -> Timed:
    """Per-step ns and the loop's wall ns (a CPU step is synchronous)."""
    clock = time.perf_counter_ns
    samples = [0] * steps
    start = clock()
    for index in range(steps):
        before = clock()
        step()
        samples[index] = clock() - before
    return Timed(samples, clock() - start)


def time_cuda_steps(step: Callable[[], Any], steps: int) -> Timed:
    """Per-step ns between CUDA events recorded at each step's start (the stream's pace: the
    host's launches where the step is launch-bound), wall ns of the loop between two
    synchronizations, and the host's own per-step time. Nothing in the loop synchronizes."""
    import warnings

    import torch

    events = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
    clock = time.perf_counter_ns
    host = [0] * steps
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            start = clock()
            for index in range(steps):
                before = clock()
                events[index].record()
                step()
                host[index] = clock() - before
            events[steps].record()
        finally:
            torch.cuda.set_sync_debug_mode(0)
    torch.cuda.synchronize()
    wall = clock() - start
    samples = [round(events[i].elapsed_time(events[i + 1]) * 1e6) for i in range(steps)]
    warned = sum("synchroniz" in str(w.message) for w in caught)
    return Timed(samples, wall, host, warned)


def summarize(samples_ns: Sequence[int]) -> dict[str, Any]:
    """Statistics of per-step times, in microseconds."""
    ordered = sorted(samples_ns)
    count = len(ordered)
    median = statistics.median(ordered)
    trim = int(count * TRIM_FRACTION)
    trimmed = ordered[trim : count - trim] or ordered
    slow = [value for value in ordered if value > SLOW_STEP_FACTOR * median]
    windows = min(WINDOWS, count)
    bounds = [count * index // windows for index in range(windows + 1)]

    def us(value: float) -> float:
        return round(value / 1e3, 3)

    def quantile(fraction: float) -> float:
        return ordered[min(count - 1, int(fraction * count))]

    return {
        "n": count,
        "median_us": us(median),
        "mean_us": us(statistics.fmean(ordered)),
        "trimmed_mean_us": us(statistics.fmean(trimmed)),
        "trim_fraction": TRIM_FRACTION,
        "stdev_us": us(statistics.stdev(ordered)) if count > 1 else 0.0,
        "min_us": us(ordered[0]),
        "p10_us": us(quantile(0.10)),
        "p90_us": us(quantile(0.90)),
        "p99_us": us(quantile(0.99)),
        "max_us": us(ordered[-1]),
        "slow_steps": len(slow),
        "slow_excess_ms": round(sum(value - median for value in slow) / 1e6, 3),
        "window_medians_us": [
            us(statistics.median(samples_ns[start:end])) for start, end in pairwise(bounds)
        ],
    }


class GcWatch:
    """Collections per generation and their pauses, from ``gc.callbacks``."""

    def __init__(self) -> None:
        self.collections = [0, 0, 0]
        self.pause_ns = 0
        self._started = 0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter_ns()
        else:
            self.pause_ns += time.perf_counter_ns() - self._started
            self.collections[info["generation"]] += 1

    @contextlib.contextmanager
    def watching(self) -> Any:
        gc.callbacks.append(self)
        try:
            yield self
        finally:
            gc.callbacks.remove(self)


def thread_names() -> dict[int, str]:
    return {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}


def thread_times() -> dict[int, tuple[int, int]]:
    """Per OS thread of this process: (ns on a CPU, times it was scheduled on one)."""
    found = {}
    for task in os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else ():
        with contextlib.suppress(OSError, ValueError):
            with open(f"/proc/self/task/{task}/schedstat") as schedstat:
                cpu_ns, _waiting_ns, runs = schedstat.read().split()[:3]
            found[int(task)] = (int(cpu_ns), int(runs))
    return found


def thread_deltas(before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]]) -> list:
    names = thread_names()
    rows = []
    for tid, (cpu_ns, runs) in sorted(after.items()):
        cpu_before, runs_before = before.get(tid, (0, 0))
        name = names.get(tid, f"native-{tid}")  # OpenMP, inductor's pool, ...
        rows.append(
            {
                "name": name,
                "cpu_ms": round((cpu_ns - cpu_before) / 1e6, 3),
                "scheduled": runs - runs_before,
                "new": tid not in before,
            }
        )
    return rows


def usage_delta(before: resource.struct_rusage, after: resource.struct_rusage) -> dict:
    return {
        "user_s": round(after.ru_utime - before.ru_utime, 4),
        "system_s": round(after.ru_stime - before.ru_stime, 4),
        "minor_faults": after.ru_minflt - before.ru_minflt,
        "major_faults": after.ru_majflt - before.ru_majflt,
        "voluntary_switches": after.ru_nvcsw - before.ru_nvcsw,
        "involuntary_switches": after.ru_nivcsw - before.ru_nivcsw,
    }


def compile_counts() -> dict[str, int]:
    from torch._dynamo.utils import counters

    return {
        "frames_ok": counters["frames"]["ok"],
        "frames_total": counters["frames"]["total"],
        "unique_graphs": counters["stats"]["unique_graphs"],
    }


def cache_counts() -> dict[str, int]:
    from torch._dynamo.utils import counters

    found = {}
    for group in ("inductor", "aot_autograd"):
        for key, value in counters[group].items():
            if "cache_hit" in key or "cache_miss" in key:
                found[key] = value
    return found


def run_child(
    config: StepConfig,
    blocks: Iterable[int],
    on_block: Callable[[list[int]], None] = lambda samples: None,
) -> dict[str, Any]:
    """Compile, warm up, then time blocks of steady steps (``blocks`` gives their sizes,
    ``on_block`` gets each block's per-step ns): the facts about all of them as one dict."""
    import torch

    for module in filter(None, os.environ.get(IMPORT_VARIABLE, "").split(",")):
        importlib.import_module(module)
    cuda = config.device.startswith("cuda")
    timer = time_cuda_steps if cuda else time_cpu_steps
    started = time.perf_counter()
    step = build_step(config)
    step()
    compile_s = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(config.warmup_steps):
        step()
    if cuda:
        torch.cuda.synchronize()
    warmup_s = time.perf_counter() - started
    compiles_before = compile_counts()
    gc_watch = GcWatch()
    usage_before = resource.getrusage(resource.RUSAGE_SELF)
    main_before = resource.getrusage(resource.RUSAGE_THREAD)
    threads_before = thread_times()
    timed = Timed()
    with gc_watch.watching():
        for count in blocks:
            block = timer(step, count)
            timed.add(block)
            on_block(block.samples)
    threads_after = thread_times()
    main_after = resource.getrusage(resource.RUSAGE_THREAD)
    usage_after = resource.getrusage(resource.RUSAGE_SELF)
    compiles_after = compile_counts()
    enabled = os.environ.get("OTEL_DYNAMO_ENABLED", "").lower() in ("1", "true", "yes", "on")
    facts = {
        "traced": enabled,
        "config": dataclasses.asdict(config),
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "torch_threads": torch.get_num_threads(),
        "cpus": os.cpu_count(),
        "compile_s": round(compile_s, 3),
        "warmup_s": round(warmup_s, 3),
        "caches": cache_counts(),
        "compiles_during_timing": compiles_after["frames_total"] - compiles_before["frames_total"],
        "graphs": compiles_after["unique_graphs"],
        "wall_ms": round(timed.wall_ns / 1e6, 3),
        "step": summarize(timed.samples),
        "gc": {
            "collections": gc_watch.collections,
            "pause_ms": round(gc_watch.pause_ns / 1e6, 3),
        },
        "process": usage_delta(usage_before, usage_after),
        "main_thread": usage_delta(main_before, main_after),
        "threads": thread_deltas(threads_before, threads_after),
    }
    if cuda:
        facts["host_step"] = summarize(timed.host)
        facts["sync_warnings"] = timed.sync_warnings
    return facts


def served_blocks() -> Iterator[int]:
    """Block sizes the parent asks for on stdin (``run N``), until ``done``; says it is
    ready first."""
    print(READY_LINE, flush=True)
    for line in sys.stdin:
        command, _, count = line.strip().partition(" ")
        if command != "run":
            return
        yield int(count)


def print_block(samples: list[int]) -> None:
    print(BLOCK_PREFIX + json.dumps(samples), flush=True)


# --- the parent: alternating pairs of fresh processes ---------------------------------------


def child_env(
    directory: str,
    *,
    traced: bool,
    hash_seed: int,
    cache: Path,
    extra: Mapping[str, str] = MappingProxyType({}),
) -> dict[str, str]:
    env = {
        key: value for key, value in os.environ.items() if not key.startswith(SCRUBBED_ENV_PREFIXES)
    }
    env["PYTHONHASHSEED"] = str(hash_seed)
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    if traced:
        env["OTEL_DYNAMO_ENABLED"] = "true"
        env["OTEL_DYNAMO_OUTPUT_DIR"] = os.path.join(directory, "telemetry")
    env.update(extra)
    return env


class Child:
    """One fresh child process in a temporary directory of its own (its inductor cache, and
    the traced one's telemetry), serving blocks of steps on request."""

    def __init__(
        self,
        config: StepConfig,
        *,
        traced: bool,
        hash_seed: int,
        template_cache: Path | None,
        serve: bool,
        extra_env: Mapping[str, str],
    ) -> None:
        self.traced = traced
        self._directory = tempfile.TemporaryDirectory(prefix="otel-dynamo-launch-bound-")
        directory = self._directory.name
        cache = Path(directory, "inductor-cache")
        if template_cache is not None:
            shutil.copytree(template_cache, cache)
        self._env = child_env(
            directory, traced=traced, hash_seed=hash_seed, cache=cache, extra=extra_env
        )
        self._stderr = open(Path(directory, "stderr.txt"), "w+")  # noqa: SIM115  # closed in close()
        command = [
            sys.executable, str(HERE), "--child", *(["--serve"] if serve else []),
            *config.child_args(),
        ]  # fmt: skip
        self._process = subprocess.Popen(
            command,
            env=self._env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )

    def _expect(self, prefix: str) -> str:
        """The rest of the next stdout line that starts with ``prefix``."""
        assert self._process.stdout is not None
        for line in self._process.stdout:
            if line.startswith(prefix):
                return line[len(prefix) :]
        self._fail()

    def _fail(self) -> NoReturn:
        self._process.wait(CHILD_TIMEOUT_S)
        self._stderr.seek(0)
        tail = self._stderr.read()[-4000:]
        sys.exit(f"bench: child failed ({self._process.returncode}):\n{tail}")

    def _send(self, line: str) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(line + "\n")
        self._process.stdin.flush()

    def ready(self) -> None:
        self._expect(READY_LINE)

    def run(self, steps: int) -> list[int]:
        self._send(f"run {steps}")
        samples: list[int] = json.loads(self._expect(BLOCK_PREFIX))
        return samples

    def finish(self, *, serving: bool) -> dict[str, Any]:
        """Its facts, once it has exited; the traced one must have written a trace file."""
        if serving:
            self._send("done")
        facts: dict[str, Any] = json.loads(self._expect(JSON_PREFIX))
        if self._process.wait(CHILD_TIMEOUT_S) != 0:
            self._fail()
        if self.traced and not any(Path(self._env["OTEL_DYNAMO_OUTPUT_DIR"]).glob("traces-*")):
            # a broken install makes OTEL_DYNAMO_ENABLED a no-op: two plain runs, ratio 1.0
            sys.exit("bench: the traced child wrote no trace file; is otel_dynamo importable?")
        if facts["compiles_during_timing"]:
            print(f"  warning: {facts['compiles_during_timing']} compiles during timed steps")
        return facts

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        for stream in (self._process.stdin, self._process.stdout, self._stderr):
            if stream is not None:
                stream.close()
        self._directory.cleanup()


@dataclasses.dataclass
class PairResult:
    """Both processes' facts, and the median step time of each block each timed (by turn)."""

    facts: dict[str, dict[str, Any]]
    block_medians: dict[str, list[float]]

    def ratio(self, first: str, second: str) -> float:
        """second / first: with turns, the median over turns of the ratio of the two blocks
        timed one right after the other (load that comes and goes hits both alike);
        without, the ratio of the whole runs' median steps."""
        if self.block_medians[first]:
            return statistics.median(
                b / a
                for a, b in zip(self.block_medians[first], self.block_medians[second], strict=True)
            )
        return float(
            self.facts[second]["step"]["median_us"] / self.facts[first]["step"]["median_us"]
        )


def run_pair(
    config: StepConfig,
    kinds: tuple[str, str],
    *,
    hash_seed: int,
    template_cache: Path | None,
    block: int,
    extra_env: Mapping[str, Mapping[str, str]],
) -> PairResult:
    """Both processes of a pair.

    ``block`` > 0: both start together, compile and warm up, then take turns, each timing
    ``block`` steps while the other waits on a pipe, in ABBA order, until each has timed
    ``config.steps``. ``block`` 0: one process after the other, each timing all its steps
    at once (in the order given).
    """
    serve = block > 0
    medians: dict[str, list[float]] = {kind: [] for kind in kinds}
    with contextlib.ExitStack() as stack:
        children: dict[str, Child] = {}
        facts: dict[str, dict[str, Any]] = {}
        for kind in kinds:
            child = Child(
                config,
                traced=kind == "traced",
                hash_seed=hash_seed,
                template_cache=template_cache,
                serve=serve,
                extra_env=extra_env.get(kind, {}),
            )
            stack.callback(child.close)
            children[kind] = child
            if not serve:
                facts[kind] = child.finish(serving=False)
        if not serve:
            return PairResult(facts, medians)
        for child in children.values():
            child.ready()
        for index in range(max(1, config.steps // block)):
            for kind in kinds if index % 2 == 0 else kinds[::-1]:
                medians[kind].append(statistics.median(children[kind].run(block)))
        facts = {kind: child.finish(serving=True) for kind, child in children.items()}
        return PairResult(facts, medians)


def bootstrap_median_ci(values: Sequence[float]) -> tuple[float, float]:
    """Percentile bootstrap interval of the median (resampling pairs)."""
    rng = random.Random(BOOTSTRAP_SEED)
    medians = sorted(
        statistics.median(rng.choices(values, k=len(values))) for _ in range(BOOTSTRAP_RESAMPLES)
    )
    tail = (1 - CONFIDENCE) / 2
    low = medians[int(tail * BOOTSTRAP_RESAMPLES)]
    high = medians[min(BOOTSTRAP_RESAMPLES - 1, int((1 - tail) * BOOTSTRAP_RESAMPLES))]
    return low, high


def verdict(median: float, low: float, high: float) -> str:
    half_width = (high - low) / 2
    resolved = half_width <= RESOLUTION
    if high <= GOAL_RATIO:
        outcome = f"goal <= {GOAL_RATIO:.2f}x met (the whole interval is within it)"
    elif low > GOAL_RATIO:
        outcome = f"goal <= {GOAL_RATIO:.2f}x MISSED (the whole interval is above it)"
    elif median <= GOAL_RATIO:
        outcome = f"goal <= {GOAL_RATIO:.2f}x met by the median, not by the whole interval"
    else:
        outcome = f"goal <= {GOAL_RATIO:.2f}x missed by the median, not by the whole interval"
    resolution = (
        f"resolution good enough (half-width {half_width * 100:.2f} % <= {RESOLUTION * 100:.0f} %)"
        if resolved
        else f"resolution NOT good enough to say (half-width {half_width * 100:.2f} %"
        f" > {RESOLUTION * 100:.0f} %): more pairs or steps, or a quieter machine"
    )
    return f"{outcome}; {resolution}"


def other_threads(facts: dict[str, Any]) -> str:
    """Threads besides the main one that ran while the process was timing (and, in turns,
    waiting for its turn)."""
    rows = [
        row
        for row in facts["threads"]
        if row["name"] != "MainThread" and (row["scheduled"] or row["cpu_ms"])
    ]
    return ", ".join(f"{row['name']} {row['scheduled']}x/{row['cpu_ms']:.1f} ms" for row in rows)


def run_pairs(
    config: StepConfig,
    *,
    pairs: int,
    block: int,
    cold_cache: bool,
    aa: bool,
    second_env: Mapping[str, str] = MappingProxyType({}),
) -> list[float]:
    """Alternating pairs; prints each, returns each pair's second / first ratio of step
    times (:meth:`PairResult.ratio`; ``second_env``: more variables for the second process
    of each pair)."""
    kinds = ("plain", "plain2") if aa else ("plain", "traced")
    with tempfile.TemporaryDirectory(prefix="otel-dynamo-launch-bound-cache-") as root:
        template = None
        if not cold_cache:  # an untimed plain run fills the cache every child gets a copy of
            template = Path(root, "inductor-cache")
            template.mkdir()
            env = child_env(root, traced=False, hash_seed=0, cache=template)
            warm = dataclasses.replace(config, warmup_steps=1, steps=2)
            command = [sys.executable, str(HERE), "--child", *warm.child_args()]
            subprocess.run(
                command, env=env, capture_output=True, timeout=CHILD_TIMEOUT_S, check=True
            )
        ratios = []
        for pair in range(pairs):
            order = kinds if pair % 2 == 0 else kinds[::-1]
            result = run_pair(
                config,
                order,
                hash_seed=random.randrange(MAX_HASH_SEED + 1),
                template_cache=template,
                block=block,
                extra_env={kinds[1]: second_env},
            )
            a, b = (result.facts[kind] for kind in kinds)
            ratio = result.ratio(*kinds)
            ratios.append(ratio)
            whole = b["step"]["median_us"] / a["step"]["median_us"]
            print(
                f"  pair {pair + 1:2d} ({order[0]} first): {kinds[0]}"
                f" {a['step']['median_us']:7.1f} us, {kinds[1]} {b['step']['median_us']:7.1f} us"
                f" (median step); ratio {ratio:.4f}x"
                + (f" (of whole runs' medians {whole:.4f}x)" if block else "")
                + f"; collections {b['gc']['collections']} vs {a['gc']['collections']},"
                f" minor faults {b['process']['minor_faults']} vs {a['process']['minor_faults']}",
                flush=True,
            )
            threads = other_threads(b)
            if threads:
                print(f"           {kinds[1]}'s other threads: {threads}")
    return ratios


def report(ratios: list[float], config: StepConfig, *, aa: bool) -> None:
    median = statistics.median(ratios)
    label = "plain / plain (noise floor)" if aa else "traced / plain"
    summary = (
        f"\n{config.device} {config.backend} mode={config.mode}, {len(ratios)} pairs x"
        f" {config.steps} steps: {label} median {median:.4f}x"
    )
    spread = f"(pairs {min(ratios):.4f}x .. {max(ratios):.4f}x)"
    if len(ratios) < MIN_PAIRS_FOR_INTERVAL:
        print(f"{summary} {spread}")
        print(f"too few pairs for a confidence interval (fewer than {MIN_PAIRS_FOR_INTERVAL})")
        return
    low, high = bootstrap_median_ci(ratios)
    print(f"{summary}, {CONFIDENCE * 100:.0f} % CI {low:.4f}x .. {high:.4f}x {spread}")
    if not aa:
        print(verdict(median, low, high))


# --- command line ---------------------------------------------------------------------------


def parser_for(description: str, *, device: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=DEFAULT_PAIRS, help="plain/traced pairs")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="timed steps a process")
    parser.add_argument(
        "--warmup-steps", type=int, default=DEFAULT_WARMUP_STEPS, help="untimed, after compiling"
    )
    parser.add_argument("--backend", default=DEFAULT_BACKEND, help="inductor or aot_eager")
    parser.add_argument("--mode", default=DEFAULT_MODE, choices=MODES, help="inductor only")
    parser.add_argument("--blocks", type=int, default=DEFAULT_BLOCKS, help="Linear+LayerNorm+GELU")
    parser.add_argument("--width", type=int, default=DEFAULT_WIDTH, help="features per block")
    parser.add_argument("--batch", type=int, default=DEFAULT_BATCH, help="rows per step")
    parser.add_argument(
        "--foreach", action="store_true", help="AdamW's foreach path (fewer, larger kernels)"
    )
    parser.add_argument(
        "--threads", type=int, default=DEFAULT_THREADS, help="torch intra-op threads a process"
    )
    parser.add_argument(
        "--cold-cache", action="store_true", help="each process compiles from an empty cache"
    )
    parser.add_argument(
        "--block",
        type=int,
        default=DEFAULT_BLOCK,
        help="steps a process times in one turn, turns ABBA (0: one process after the other)",
    )
    parser.add_argument("--aa", action="store_true", help="both of a pair plain: noise floor")
    parser.add_argument(
        "--traced-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a variable for the traced process (with --aa: the second plain one), repeatable;"
        f" {IMPORT_VARIABLE}=MODULE,... makes a child import those modules first",
    )
    parser.add_argument(
        "--child", action="store_true", help="be one process: time the steps, print JSON"
    )
    parser.add_argument(
        "--serve", action="store_true", help="with --child: time blocks the parent asks for"
    )
    parser.add_argument("--device", default=device, help=argparse.SUPPRESS)
    return parser


def config_from(args: argparse.Namespace) -> StepConfig:
    return StepConfig(
        device=args.device,
        backend=args.backend,
        mode=args.mode,
        blocks=args.blocks,
        width=args.width,
        batch=args.batch,
        warmup_steps=args.warmup_steps,
        steps=args.steps,
        foreach=args.foreach,
        threads=args.threads,
    )


def main(argv: Sequence[str] | None = None, *, device: str = "cpu", doc: str = __doc__) -> None:
    parser = parser_for(doc.split("\n", maxsplit=1)[0], device=device)
    args = parser.parse_args(argv)
    if args.mode != DEFAULT_MODE and args.backend != "inductor":
        parser.error("--mode applies to the inductor backend only")
    config = config_from(args)
    if args.child:
        blocks = served_blocks() if args.serve else [config.steps]
        facts = run_child(config, blocks, print_block if args.serve else lambda samples: None)
        print(JSON_PREFIX + json.dumps(facts), flush=True)
        return
    print(
        f"{config.device}: {config.blocks} blocks x width {config.width}, batch {config.batch},"
        f" AdamW foreach={config.foreach}, {config.backend} mode={config.mode},"
        f" {config.threads} torch thread(s);"
        f" {config.steps} timed steps after {config.warmup_steps}"
        f" ({f'in turns of {args.block}' if args.block else 'one process after the other'});"
        f" {os.cpu_count()} CPUs;"
        + "".join(f" {item};" for item in args.traced_env)
        + f" load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    second_env = dict(item.split("=", 1) for item in args.traced_env)
    ratios = run_pairs(
        config,
        pairs=args.pairs,
        block=args.block,
        cold_cache=args.cold_cache,
        aa=args.aa,
        second_env=second_env,
    )
    report(ratios, config, aa=args.aa)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
