"""OpenTelemetry metrics of torch.compile: the recorder's MetricsSink.

Instruments are created once per meter provider. Compiled runs are counted on the hot
path by a bare integer in each RunState; an observable counter sums those integers
when the reader collects, so counting every run costs nothing extra per call.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
from collections.abc import Iterable, Mapping

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.trace import Span, SpanContext

from otel_dynamo import names
from otel_dynamo._lifecycle import forks
from otel_dynamo._lifecycle.flush_soon import FlushSoon
from otel_dynamo._recording.instruments import counter, histogram, observable_counter
from otel_dynamo._recording.phase_split import TIME_DECIMALS
from otel_dynamo._recording.records import FrameCompiled, LazyBackwardCompiled, RunIdentity
from otel_dynamo._recording.run_state import RunState
from otel_dynamo.version import __version__

COMPILE_DURATION_BUCKETS_S = (
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 60.0, 120.0, 300.0, 600.0,
)  # fmt: skip
"""Compile-duration histogram boundaries: compiles of 10 ms to 10 min, about 2.5x apart."""

COMPILE_TIME_BUCKETS_S = (
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
)  # fmt: skip
"""Compile-time-per-category boundaries: a category can take a millisecond."""

RUN_DURATION_BUCKETS_S = (
    1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0,
)  # fmt: skip
"""Compiled-run histogram boundaries: 10 µs to 5 s (host-side time)."""

GUARD_BUCKETS = (1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000)
"""Guards-per-frame histogram boundaries."""
CACHE_ENTRY_BUCKETS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64)
"""Cache-entries histogram boundaries: one per entry up to the default recompile limit (8),
so an alert can count compiles that found 7 (they fill the cache)."""

DEVICE_DURATION_BUCKETS_S = (
    1e-6, 5e-6, 1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 0.01, 0.05, 0.1, 0.5, 1.0,
)  # fmt: skip
"""Device-time histogram boundaries: 1 µs (a tiny kernel) to 1 s."""
MAX_DEVICE_TIME_COMPILE_IDS = 128
"""Compile ids that get a device-time series of their own; later ones share "other"."""
OTHER_COMPILE_IDS = "other"

UNKNOWN_BACKEND = "unknown"
MAX_TRACKED_RUNS = 10_000
"""Compiled graphs whose runs are counted individually (see RunCounts)."""
MAX_FOLDED_VARIANTS = 10_000
"""Variants whose calls are still told apart after their graphs were folded (see RunCounts)."""
MAX_VARIANT_SERIES = 64
"""Compile ids that get a torch.compile.variant.calls series of their own, in the order
they were compiled; later ones share "other" (a fixed set, so each series stays monotonic)."""


class CompileMetrics:
    """Counters and histograms of compiles, graphs, breaks, recompiles, runs and failures."""

    def __init__(
        self, meter_provider: metrics.MeterProvider, *, flush_soon: FlushSoon | None = None
    ) -> None:
        # After each frame compile (otel_dynamo's own providers only: a user's reader
        # keeps its own schedule): a job killed before the next periodic read keeps it.
        self._flush_soon = flush_soon
        meter = meter_provider.get_meter(
            names.INSTRUMENTATION_NAME, __version__, schema_url=names.SCHEMA_URL
        )
        self._compiles = counter(meter, names.METRIC_COMPILES)
        self._compile_duration = histogram(
            meter, names.METRIC_COMPILE_DURATION, COMPILE_DURATION_BUCKETS_S
        )
        self._compile_time = histogram(meter, names.METRIC_COMPILE_TIME, COMPILE_TIME_BUCKETS_S)
        self._graphs = counter(meter, names.METRIC_GRAPHS)
        self._breaks = counter(meter, names.METRIC_GRAPH_BREAKS)
        self._recompiles = counter(meter, names.METRIC_RECOMPILES)
        self._guards = histogram(meter, names.METRIC_GUARDS, GUARD_BUCKETS)
        self._cache_entries = histogram(meter, names.METRIC_CACHE_ENTRIES, CACHE_ENTRY_BUCKETS)
        self._run_duration = histogram(meter, names.METRIC_RUN_DURATION, RUN_DURATION_BUCKETS_S)
        self._device_duration = histogram(
            meter, names.METRIC_RUN_DEVICE_DURATION, DEVICE_DURATION_BUCKETS_S
        )
        self._device_dropped = counter(meter, names.METRIC_RUN_DEVICE_DROPPED)
        self._device_compile_ids: set[str] = set()
        self._cudagraphs = counter(meter, names.METRIC_CUDAGRAPH_GRAPHS)
        self._cache_lookups = counter(meter, names.METRIC_CACHE_LOOKUPS)
        self._failures = counter(meter, names.METRIC_FAILURES)
        self._faults = counter(meter, names.METRIC_FAULTS)
        self.run_counts = RunCounts()
        observable_counter(meter, names.METRIC_RUNS, self.run_counts.observe)
        observable_counter(meter, names.METRIC_VARIANT_CALLS, self.run_counts.observe_variants)

    def frame_compiled(self, record: FrameCompiled) -> None:
        backend = record.backend or UNKNOWN_BACKEND
        labels = {names.ATTR_BACKEND: backend, names.ATTR_OUTCOME: record.outcome}
        self._compiles.add(1, labels)
        context = _context_of(record.span)
        # Recorded in the frame span's context, so exemplars link the histogram to the trace.
        self._compile_duration.record(
            max(record.duration_s, 0.0),
            {**labels, names.ATTR_COMPILE_KIND: names.COMPILE_KIND_FRAME},
            context=context,
        )
        self._record_time_split(record.time_split, backend, names.COMPILE_KIND_FRAME, context)
        self._guards.record(record.ended.guard_count, labels)
        if record.ended.cache_size is not None:
            self._cache_entries.record(record.ended.cache_size, {names.ATTR_BACKEND: backend})
        if record.recompile_reason:
            self._recompiles.add(1, {names.ATTR_BACKEND: backend})
        if self._flush_soon is not None:
            self._flush_soon.kick()

    def lazy_backward_compiled(self, record: LazyBackwardCompiled) -> None:
        backend = record.backend or UNKNOWN_BACKEND
        labels = {
            names.ATTR_BACKEND: backend,
            names.ATTR_OUTCOME: names.OUTCOME_SUCCESS,
            names.ATTR_COMPILE_KIND: names.COMPILE_KIND_LAZY_BACKWARD,
        }
        context = _context_of(record.span)
        self._compile_duration.record(max(record.duration_s, 0.0), labels, context=context)
        kind = names.COMPILE_KIND_LAZY_BACKWARD
        self._record_time_split(record.time_split, backend, kind, context)

    def _record_time_split(
        self, split: Mapping[str, float], backend: str, kind: str, context: Context | None
    ) -> None:
        """One compile-time point per category the compile spent time in."""
        for category, seconds in split.items():
            labels = {
                names.ATTR_TIME_CATEGORY: category,
                names.ATTR_BACKEND: backend,
                names.ATTR_COMPILE_KIND: kind,
            }
            self._compile_time.record(round(seconds, TIME_DECIMALS), labels, context=context)

    def graph_compiled(self, backend: str) -> None:
        self._graphs.add(1, {names.ATTR_BACKEND: backend})

    def graph_break(self, kind: str) -> None:
        self._breaks.add(1, {names.ATTR_GRAPH_BREAK_KIND: kind})

    def failure(self, stage: str, error_type: str) -> None:
        self._failures.add(1, {names.ATTR_STAGE: stage, names.ATTR_ERROR_TYPE: error_type})

    def fault(self, kind: str) -> None:
        self._faults.add(1, {names.ATTR_FAULT_KIND: kind})

    def track_run(self, run: RunState) -> None:
        self.run_counts.track(run)

    def run_recorded(self, run: RunState, span: Span, duration_s: float) -> None:
        self._run_duration.record(
            duration_s, {names.ATTR_RUN_KIND: run.kind}, context=trace.set_span_in_context(span)
        )

    def device_time(self, run: RunIdentity, device: str, seconds: float) -> None:
        compile_id = run.compile_id
        if compile_id not in self._device_compile_ids:
            if len(self._device_compile_ids) < MAX_DEVICE_TIME_COMPILE_IDS:
                self._device_compile_ids.add(compile_id)
            else:
                compile_id = OTHER_COMPILE_IDS
        labels = {
            names.ATTR_RUN_KIND: run.kind,
            names.ATTR_BACKEND: run.backend or UNKNOWN_BACKEND,
            names.ATTR_RUN_DEVICE: device,
            names.ATTR_COMPILE_ID: compile_id,
        }
        self._device_duration.record(seconds, labels)

    def device_time_dropped(self, reason: str) -> None:
        self._device_dropped.add(1, {names.ATTR_RUN_DEVICE_DROP_REASON: reason})

    def cudagraph_decided(self, decision: str, category: str | None) -> None:
        labels = {names.ATTR_CUDAGRAPH_DECISION: decision}
        if category:
            labels[names.ATTR_CUDAGRAPH_SKIP_CATEGORY] = category
        self._cudagraphs.add(1, labels)

    def cache_lookup(self, cache: str, state: str) -> None:
        self._cache_lookups.add(1, {names.ATTR_CACHE_NAME: cache, names.ATTR_CACHE_STATE: state})


def _context_of(span: Span | None) -> Context | None:
    return trace.set_span_in_context(span) if span is not None else None


@dataclasses.dataclass(frozen=True, slots=True)
class VariantCalls:
    """How many calls one compiled variant (a compile id) served, for one run kind."""

    compile_id: str
    kind: str
    calls: int
    link: SpanContext | None
    """The span context of the variant's graph that ran most: its events go there."""


VariantKey = tuple[str, str]
"""(compile id, run kind)."""


class RunCounts:
    """Sums the run counters of compiled graphs by run kind, and tells variants apart.

    Holds the RunStates it tracks (small objects: a count, a kind, a few attributes);
    past MAX_TRACKED_RUNS the oldest are folded into fixed totals, so memory stays
    bounded and a graph compiled long ago stops adding its later runs.

    A variant (one compile id) served as many calls as its graph that ran most: each
    call of a cache entry runs each of its graphs (several when DDPOptimizer splits one)
    once, so the sum of their runs would count a call per graph.
    """

    def __init__(
        self,
        *,
        limit: int = MAX_TRACKED_RUNS,
        folded_variants: int = MAX_FOLDED_VARIANTS,
        variant_series: int = MAX_VARIANT_SERIES,
    ) -> None:
        self._lock = threading.RLock()  # observe_variants holds it across variants()
        self._limit = limit
        self._live: collections.deque[RunState] = collections.deque()
        self._folded: dict[str, int] = {}
        self._folded_variants: dict[VariantKey, int] = {}
        self._folded_variants_limit = folded_variants
        self._overflow: dict[str, int] = {}
        """Calls by run kind of folded variants past ``folded_variants``: kept in "other"."""
        self._series_ids: dict[str, None] = {}
        self._series_limit = variant_series
        forks.reset_in_child(self._renew_lock)

    def _renew_lock(self) -> None:
        self._lock = threading.RLock()  # another thread (a metric read) may have held it

    def track(self, run: RunState) -> None:
        compile_id = _compile_id_of(run)
        with self._lock:
            if compile_id is not None and len(self._series_ids) < self._series_limit:
                self._series_ids.setdefault(compile_id, None)
            self._live.append(run)
            while len(self._live) > self._limit:
                self._fold(self._live.popleft())

    def _fold(self, oldest: RunState) -> None:
        self._folded[oldest.kind] = self._folded.get(oldest.kind, 0) + oldest.count
        compile_id = _compile_id_of(oldest)
        if compile_id is None:
            return
        key = (compile_id, oldest.kind)
        if key in self._folded_variants or len(self._folded_variants) < self._folded_variants_limit:
            self._folded_variants[key] = max(self._folded_variants.get(key, 0), oldest.count)
        else:  # told apart no more, but still counted: "other" never goes down
            self._overflow[oldest.kind] = self._overflow.get(oldest.kind, 0) + oldest.count

    def totals(self) -> dict[str, int]:
        with self._lock:
            totals = dict(self._folded)
            for run in self._live:
                totals[run.kind] = totals.get(run.kind, 0) + run.count
        return totals

    def variants(self) -> list[VariantCalls]:
        """Each variant that served at least one call, in the order its graphs were tracked."""
        found: dict[VariantKey, VariantCalls] = {}
        with self._lock:
            for (folded_id, kind), calls in self._folded_variants.items():
                found[(folded_id, kind)] = VariantCalls(folded_id, kind, calls, None)
            live = list(self._live)
        for run in live:
            compile_id = _compile_id_of(run)
            if compile_id is None:
                continue
            count = run.count  # read once: the job's threads keep counting
            known = found.get((compile_id, run.kind))
            if known is None or count > known.calls or known.link is None:
                most = count if known is None else max(count, known.calls)
                found[(compile_id, run.kind)] = VariantCalls(compile_id, run.kind, most, run.link)
        return [variant for variant in found.values() if variant.calls > 0]

    def observe(self, _options: CallbackOptions) -> Iterable[Observation]:
        return [Observation(n, {names.ATTR_RUN_KIND: kind}) for kind, n in self.totals().items()]

    def observe_variants(self, _options: CallbackOptions) -> Iterable[Observation]:
        with self._lock:  # one snapshot: a graph folded meanwhile is not counted twice
            sums: dict[VariantKey, int] = {
                (OTHER_COMPILE_IDS, kind): calls for kind, calls in self._overflow.items()
            }
            variants = self.variants()
        for variant in variants:
            label = (
                variant.compile_id if variant.compile_id in self._series_ids else OTHER_COMPILE_IDS
            )
            key = (label, variant.kind)
            sums[key] = sums.get(key, 0) + variant.calls
        return [
            Observation(calls, {names.ATTR_COMPILE_ID: compile_id, names.ATTR_RUN_KIND: kind})
            for (compile_id, kind), calls in sums.items()
        ]


def _compile_id_of(run: RunState) -> str | None:
    return run.identity.compile_id or None
