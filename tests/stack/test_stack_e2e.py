"""The shipped telemetry path end to end, on loopback, with the real programs (issue 53):
a traced torchrun job (two ranks: real compiles, graph breaks, recompiles, failures, an
injected fault) -> the agent Collector -> two gateway Collectors that route each trace
to one of them by trace id -> Jaeger (memory and Badger storage), Debian's Prometheus
(remote-write receiver on, the shipped rules loaded) and a file exporter for logs.

Three set-ups, one per module fixture (tests/_stack_pipeline.py starts them):
- ``everything``: the gateways keep every trace (TRACE_SAMPLE_PERCENT=100); a job made to
  trigger every alert, then a clean job;
- ``sampled``: the shipped sampling policies as they are (10 % of the unremarkable rest);
- ``gateway_restarted``: a gateway killed mid-job (SIGKILL) and started again.
Each copy of a shipped config changes only what tests/_real_stack.ALLOWED_CHANGES lists;
sampling waits and thresholds are set by the environment variables gateway.yaml reads.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import re
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _stack_support as support
import pytest
import yaml
from _real_stack import COLLECTOR_BINARY, JAEGER_BINARY, Jaeger, stack_binary
from _report_compare import differences, without_log_only
from _stack_pipeline import (
    DIVERGING_RANK,
    RANKS,
    RULES,
    JobRun,
    Pipeline,
    Span,
    file_spans,
    finish_job,
    firing_alerts,
    jaeger_spans,
    log_records,
    running_pipeline,
    start_job,
)
from dashgen import recorded
from dashgen.queries import render

from otel_dynamo import cli, names
from otel_dynamo._config.settings import DEFAULT_SHUTDOWN_TIMEOUT_SECONDS
from otel_dynamo.report.read.jaeger import rfc3339

pytestmark = pytest.mark.slow

TRIGGER = "otel-dynamo-e2e-trigger"
CLEAN = "otel-dynamo-e2e-clean"
EXEMPT_ALERTS = {
    "TorchCompileTimeRegression": "compares the last hour's mean compile with the week before",
}
"""Alerts over windows a short job cannot fill, and why."""
COLLECTOR_RESOURCE = frozenset({"host.name", "os.type"})
"""What agent.yaml's resource_detection (env, system) may add to a span's resource."""
CUDA_ONLY_METRICS = (names.METRIC_RUN_DEVICE_DURATION, names.METRIC_RUN_DEVICE_DROPPED)
"""Recorded only for graphs on a CUDA device: the CPU job here has none."""
DELIVERY_SECONDS = 120.0
ALERT_SECONDS = 90.0
RULE_EVALUATIONS_SECONDS = 5.0
"""How long the clean job's series stand in Prometheus before its alerts are read."""
EXPORT_DELAY_SECONDS = 5.0 + 2.0 + 2.0
"""The SDK's batch delay (OTEL_BSP_SCHEDULE_DELAY), the agent's and the gateway's batch
timeouts: how long a span may take from its end to the gateway's sampling wait."""


def _seconds(duration: str) -> float:
    """A Collector duration of whole seconds ("30s") in seconds."""
    return float(duration.removesuffix("s"))


def _alert_names() -> set[str]:
    rules = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    return {
        rule["alert"] for group in rules["groups"] for rule in group["rules"] if "alert" in rule
    }


def _has_series(pipeline: Pipeline, service: str) -> bool:
    name = names.METRIC_COMPILES.replace(".", "_") + "_total"
    return bool(pipeline.prometheus.query(f'{name}{{job="{service}"}}'))


def _alerts_of(pipeline: Pipeline, service: str) -> list[dict[str, str]]:
    return [labels for labels in firing_alerts(pipeline.prometheus) if labels.get("job") == service]


def _wait_for_alerts(pipeline: Pipeline, service: str, wanted: set[str]) -> list[dict[str, str]]:
    """The alerts firing for ``service`` once every ``wanted`` one fires (or at the
    deadline, whatever fires then)."""
    deadline = time.monotonic() + ALERT_SECONDS
    while True:
        alerts = _alerts_of(pipeline, service)
        if wanted <= {a["alertname"] for a in alerts} or time.monotonic() > deadline:
            return alerts
        time.sleep(1)


def _stored(jaeger: Jaeger, run: JobRun, expected: set[str]) -> dict[str, Span]:
    """What ``jaeger`` holds of ``run`` once it holds every span id of ``expected`` (or at
    the deadline, whatever it holds then)."""
    deadline = time.monotonic() + DELIVERY_SECONDS
    while True:
        got = jaeger_spans(jaeger, run.service, run.started_ns - 10**9, run.ended_ns + 10**9)
        if expected <= set(got) or time.monotonic() > deadline:
            return got
        time.sleep(1)


@dataclasses.dataclass
class Everything:
    """The set-up that keeps every trace, after a trigger job and a clean job."""

    pipeline: Pipeline
    trigger: JobRun
    clean: JobRun
    trigger_alerts: list[dict[str, str]]
    clean_alerts: list[dict[str, str]]


def _skip_without_programs() -> None:
    stack_binary(COLLECTOR_BINARY)
    stack_binary(JAEGER_BINARY)


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Everything]:
    _skip_without_programs()
    env = {
        "TRACE_SAMPLE_PERCENT": "100",
        "TAIL_SAMPLING_DECISION_WAIT": "5s",
    }
    with running_pipeline(tmp_path_factory.mktemp("everything"), gateway_env=env) as pipeline:
        trigger = finish_job(start_job(pipeline, TRIGGER, kind="trigger"))
        assert trigger.returncode == 0, trigger.stderr[-4000:]
        wanted = _alert_names() - set(EXEMPT_ALERTS)
        trigger_alerts = _wait_for_alerts(pipeline, TRIGGER, wanted)
        clean = finish_job(start_job(pipeline, CLEAN, kind="clean"))
        assert clean.returncode == 0, clean.stderr[-4000:]
        support.wait_until(lambda: _has_series(pipeline, CLEAN), ALERT_SECONDS)
        time.sleep(RULE_EVALUATIONS_SECONDS)
        yield Everything(pipeline, trigger, clean, trigger_alerts, _alerts_of(pipeline, CLEAN))


def _same_span(local: Span, stored: Span) -> list[str]:
    """How ``stored`` differs from ``local``: every field equal, the resource a superset
    by only what the Collector adds."""
    wrong = [
        f"{field}: {getattr(local, field)!r} != {getattr(stored, field)!r}"
        for field in ("trace_id", "parent_span_id", "name", "status_code", "start_ns", "end_ns")
        if getattr(local, field) != getattr(stored, field)
    ]
    if stored.attributes != local.attributes:
        wrong.append(f"attributes: {differences(local.attributes, stored.attributes)}")
    if stored.events != local.events:
        wrong.append(f"events: {differences(local.events, stored.events)}")
    added = set(stored.resource) - set(local.resource)
    kept = {key: stored.resource[key] for key in local.resource if key in stored.resource}
    if kept != local.resource or not added <= COLLECTOR_RESOURCE:
        wrong.append(f"resource: {local.resource} -> {stored.resource}")
    return wrong


def test_every_span_reaches_jaeger_memory_storage_as_the_job_wrote_it(
    everything: Everything,
) -> None:
    """With 100 % sampling every span of the trigger job's own files is in Jaeger's memory
    storage with the same ids, name, status, times, attributes (arrays as arrays) and
    events; its resource gains only what the agent's resource detection adds."""
    local = file_spans(everything.trigger.files)
    assert len(local) > 500
    assert any(isinstance(v, list) for s in local.values() for v in s.attributes.values())
    stored = _stored(everything.pipeline.jaegers["memory"], everything.trigger, set(local))
    assert sorted(set(local) - set(stored)) == []
    wrong = {sid: _same_span(span, stored[sid]) for sid, span in local.items()}
    assert {sid: w for sid, w in wrong.items() if w} == {}
    assert all("os.type" in stored[sid].resource for sid in local)


def _arrays_parsed(local: Span, stored: Span) -> tuple[Span, list[str]]:
    """``stored`` with each attribute that the local span holds as an array, and Badger
    gave back as text, parsed as JSON; and the keys where it was not such text."""
    not_text: list[str] = []

    def parsed(mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
        out = dict(theirs)
        for key, value in mine.items():
            if isinstance(value, list):
                if isinstance(theirs.get(key), str):
                    out[key] = json.loads(theirs[key])
                else:
                    not_text.append(key)
        return out

    events = [
        (name, parsed(local.events[i][1] if i < len(local.events) else {}, attributes))
        for i, (name, attributes) in enumerate(stored.events)
    ]
    span = dataclasses.replace(
        stored, attributes=parsed(local.attributes, stored.attributes), events=events
    )
    return span, not_text


def test_every_span_reaches_jaeger_badger_storage_arrays_as_json_text(
    everything: Everything,
) -> None:
    """Jaeger's Badger storage holds every span too, each field as the job wrote it except
    that every array attribute comes back as its JSON text; each such key is one
    names.ARRAY_ATTRIBUTES lists, so the report knows to parse it back."""
    local = file_spans(everything.trigger.files)
    stored = _stored(everything.pipeline.jaegers["badger"], everything.trigger, set(local))
    assert sorted(set(local) - set(stored)) == []
    array_keys = set()
    for sid, span in local.items():
        array_keys |= {k for k, v in span.attributes.items() if isinstance(v, list)}
        array_keys |= {k for _, a in span.events for k, v in a.items() if isinstance(v, list)}
        parsed, not_text = _arrays_parsed(span, stored[sid])
        assert not_text == [], sid
        assert _same_span(span, parsed) == [], sid
    assert array_keys and sorted(array_keys - names.ARRAY_ATTRIBUTES) == []


@pytest.mark.parametrize("storage", ["memory", "badger"])
def test_report_from_jaeger_is_the_report_from_the_files(
    everything: Everything, storage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``otel-dynamo report --json`` on the Jaeger address of the trigger job equals the
    report on the job's own files (both ranks), apart from inputs, source and the keys
    only logs carry."""
    run = everything.trigger
    jaeger = everything.pipeline.jaegers[storage]
    _stored(jaeger, run, set(file_spans(run.files)))
    query = urllib.parse.urlencode(
        {
            "service": run.service,
            "start": rfc3339(run.started_ns - 10**9),
            "end": rfc3339(run.ended_ns + 10**9),
        }
    )
    assert cli.main(["report", f"{jaeger.query_url}/?{query}", "--json"]) == 0
    from_jaeger = json.loads(capsys.readouterr().out)
    assert cli.main(["report", str(run.files), "--json"]) == 0
    from_files = json.loads(capsys.readouterr().out)
    assert len(from_files["processes"]) == RANKS
    assert from_files["totals"]["graph_breaks"] > 0 and from_files["totals"]["recompiles"] > 0
    assert differences(without_log_only(from_jaeger), without_log_only(from_files)) == []
    assert from_jaeger["source"]["kind"] == "jaeger"


def test_every_dashboard_promql_returns_data_through_remote_write(
    everything: Everything,
) -> None:
    """Each PromQL expression of the shipped dashboards (job = the trigger job), including
    those over the recording rules' series, returns a sample from what the gateways wrote
    to Prometheus by remote write; only the CUDA-only metrics are left out."""
    variables = {"job": TRIGGER, "backend": ".*", "run_id": ".*"}
    cuda_only = [metric.replace(".", "_") for metric in CUDA_ONLY_METRICS]
    queries = [
        q
        for q in support.all_queries()
        if q.kind == "prometheus"
        and not q.text.startswith("label_values(")
        and not any(metric in q.text for metric in cuda_only)
    ]
    assert any(name in q.text for q in queries for name in recorded.SERIES)
    pending = {render(q.text, variables): f"{q.dashboard}: {q.where}" for q in queries}
    deadline = time.monotonic() + ALERT_SECONDS
    while pending and time.monotonic() < deadline:
        pending = {
            e: w
            for e, w in pending.items()
            if not any(r["value"][1] != "NaN" for r in everything.pipeline.prometheus.query(e))
        }
        if pending:
            time.sleep(1)
    assert sorted(pending.values()) == []


HEADLINE_TOTALS = {
    "Frame compiles": "frame_compiles",
    "Graph breaks": "graph_breaks",
    "Recompiles": "recompiles",
    "Failures": "failures",
}
"""Overview stat panels, and the report total each counts."""


def _headline_totals(pipeline: Pipeline, service: str) -> dict[str, float]:
    """The overview's headline totals for ``service`` over the last 30 minutes."""
    variables = {"job": service, "backend": ".*", "run_id": ".*", "__range": "30m"}
    found = {}
    for query in support.all_queries():
        title = re.search(r"panel '([^']+)'", query.where)
        if query.dashboard.endswith("overview") and title and title[1] in HEADLINE_TOTALS:
            result = pipeline.prometheus.query(render(query.text, variables))
            found[title[1]] = sum(float(r["value"][1]) for r in result)
    return found


def _report_totals(files: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, float]:
    """The report's totals of a job's own files, as the headline titles them."""
    assert cli.main(["report", str(files), "--json"]) == 0
    totals = json.loads(capsys.readouterr().out)["totals"]
    return {title: float(totals[key]) for title, key in HEADLINE_TOTALS.items()}


def test_dashboard_totals_equal_the_report_of_the_job_files(
    everything: Everything, capsys: pytest.CaptureFixture[str]
) -> None:
    """The overview's headline totals, over a time range holding the whole trigger job,
    equal ``otel-dynamo report``'s totals of the job's own files: each counter arrives
    whole through the Collector's remote write, its first sample included."""
    expected = _report_totals(everything.trigger.files, capsys)
    assert _headline_totals(everything.pipeline, TRIGGER) == expected
    assert all(expected.values())


def test_every_alert_a_short_job_can_trigger_fires_for_the_trigger_job(
    everything: Everything,
) -> None:
    """Every shipped alert except those EXEMPT_ALERTS lists fires for the trigger job
    (rules as shipped, ``for:`` 0s, evaluated every second)."""
    fired = {alert["alertname"] for alert in everything.trigger_alerts}
    assert sorted(_alert_names() - set(EXEMPT_ALERTS) - fired) == []
    assert set(EXEMPT_ALERTS) <= _alert_names()


def test_ranks_diverge_names_both_of_two_ranks_by_recompiles_not_breaks(
    everything: Everything,
) -> None:
    """Rank 1 recompiles more than rank 0: with two ranks the median lies between them,
    so TorchCompileRanksDiverge fires for both, on recompiles (and frame compiles, each
    recompile being one), never on graph breaks, which the ranks share."""
    diverging = [
        a for a in everything.trigger_alerts if a["alertname"] == "TorchCompileRanksDiverge"
    ]
    ranks = {a["torch_distributed_rank"] for a in diverging}
    counted = {a["counted"] for a in diverging}
    assert ranks == {str(rank) for rank in range(RANKS)} and DIVERGING_RANK < RANKS
    assert counted == {"recompiles", "frame_compiles"}


def test_no_alert_fires_for_the_clean_job(everything: Everything) -> None:
    """A job that compiles once and reruns with the same inputs fires no alert, its
    series standing in Prometheus beside the trigger job's."""
    assert everything.clean_alerts == []
    assert any(a["alertname"] == "TorchCompileFailures" for a in everything.trigger_alerts)


def _log_key(record: dict[str, Any]) -> tuple[str, str, str, str]:
    return (
        str(record.get("timeUnixNano")),
        str(record.get("traceId", "")),
        str(record.get("spanId", "")),
        json.dumps(record.get("body"), sort_keys=True),
    )


def test_log_records_reach_the_gateway_file_with_trace_and_span_ids(
    everything: Everything,
) -> None:
    """Every log record the jobs wrote locally reaches the gateways' log file (the Loki
    exporter swapped for a file exporter) with the same trace and span ids; the compile
    events among them carry ids."""
    runs = (everything.trigger, everything.clean)
    local = [r for run in runs for r in log_records(sorted(run.files.glob("logs-*.jsonl")))]
    with_ids = [r for r in local if r.get("traceId") and r.get("spanId")]
    assert len(with_ids) > 100
    services = {run.service for run in runs}

    def delivered() -> list[dict[str, Any]]:
        records = log_records([everything.pipeline.logs_file])
        return [r for r in records if r["resource"].get("service.name") in services]

    support.wait_until(lambda: len(delivered()) >= len(local), DELIVERY_SECONDS)
    assert collections.Counter(map(_log_key, delivered())) == collections.Counter(
        map(_log_key, local)
    )
    events = [r for r in local if str(r.get("eventName", "")).startswith("torch.compile.")]
    assert events and all(r.get("traceId") and r.get("spanId") for r in events)


# --- the shipped sampling policies -------------------------------------------------------

SLOW_COMPILE_THRESHOLD_MS = 3000
SLOW_COMPILE_SECONDS = 6.0
SAMPLED_DECISION_WAIT = "3s"
"""Shorter than the slow compile: a compile's spans arrive together when its frame ends."""


def _remarkable(spans: list[Span], threshold_ms: int) -> list[str]:
    """Why gateway.yaml's policies must keep a trace of ``spans`` (empty: they need not)."""
    why = []
    if any(s.status_code == 2 for s in spans):
        why.append("error")
    every = [s.attributes for s in spans] + [a for s in spans for _, a in s.events]
    if any(names.ATTR_FAULT_KIND in a for a in every):
        why.append("fault")
    if any(s.attributes.get(names.ATTR_GRAPH_BREAK_COUNT, 0) >= 1 for s in spans) or any(
        name == names.EVENT_GRAPH_BREAK for s in spans for name, _ in s.events
    ):
        why.append("graph break")
    if any(names.ATTR_RECOMPILE_REASON in s.attributes for s in spans):
        why.append("recompile")
    duration_ms = (max(s.end_ns for s in spans) - min(s.start_ns for s in spans)) / 1e6
    if duration_ms >= threshold_ms:
        why.append("slow")
    return why


@dataclasses.dataclass
class Sampled:
    """The shipped sampling after a trigger job with one slow compile."""

    local: dict[str, list[Span]]
    """The job's own spans by trace id."""
    stored: dict[str, list[Span]]
    """Jaeger's spans of the job by trace id."""


def _by_trace(spans: dict[str, Span]) -> dict[str, list[Span]]:
    traces: dict[str, list[Span]] = collections.defaultdict(list)
    for span in spans.values():
        traces[span.trace_id].append(span)
    return dict(traces)


@pytest.fixture(scope="module")
def sampled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sampled]:
    _skip_without_programs()
    env = {
        "TAIL_SAMPLING_DECISION_WAIT": SAMPLED_DECISION_WAIT,
        "SLOW_COMPILE_THRESHOLD_MS": str(SLOW_COMPILE_THRESHOLD_MS),
    }
    with running_pipeline(tmp_path_factory.mktemp("sampled"), gateway_env=env) as pipeline:
        run = finish_job(
            start_job(
                pipeline,
                "otel-dynamo-e2e-sampled",
                kind="trigger",
                slow_compile_seconds=SLOW_COMPILE_SECONDS,
            )
        )
        assert run.returncode == 0, run.stderr[-4000:]
        local = _by_trace(file_spans(run.files))
        kept = {
            sid
            for spans in local.values()
            if _remarkable(spans, SLOW_COMPILE_THRESHOLD_MS)
            for sid in (s.span_id for s in spans)
        }
        stored = _stored(pipeline.jaegers["memory"], run, kept)
        # Every trace is decided one decision wait after its last spans could arrive.
        time.sleep(_seconds(SAMPLED_DECISION_WAIT) + EXPORT_DELAY_SECONDS)
        stored = jaeger_spans(
            pipeline.jaegers["memory"], run.service, run.started_ns - 10**9, time.time_ns()
        )
        yield Sampled(local, _by_trace(stored))


def test_shipped_sampling_keeps_every_remarkable_trace_whole(sampled: Sampled) -> None:
    """Under gateway.yaml's policies as shipped, every trace with an error, a fault, a
    graph break, a recompile or a compile slower than SLOW_COMPILE_THRESHOLD_MS is in
    Jaeger with all its spans; the slow compile takes longer than the decision wait."""
    remarkable = {
        tid: _remarkable(spans, SLOW_COMPILE_THRESHOLD_MS) for tid, spans in sampled.local.items()
    }
    kinds = {why for reasons in remarkable.values() for why in reasons}
    assert kinds == {"error", "fault", "graph break", "recompile", "slow"}
    missing = {
        tid: reasons
        for tid, reasons in remarkable.items()
        if reasons
        and {s.span_id for s in sampled.local[tid]}
        != {s.span_id for s in sampled.stored.get(tid, [])}
    }
    assert missing == {}


def test_shipped_sampling_drops_most_unremarkable_traces(sampled: Sampled) -> None:
    """Of the job's unremarkable traces (at least 20), the shipped 10 % keeps fewer than
    half."""
    plain = [tid for tid, spans in sampled.local.items() if not _remarkable(spans, 3_600_000)]
    kept = [tid for tid in plain if tid in sampled.stored]
    assert len(plain) >= 20
    assert len(kept) / len(plain) < 0.5


# --- a gateway killed mid-job ------------------------------------------------------------

RESTART_DECISION_WAIT = "10s"
OUTAGE_SECONDS = 8.0
RESTART_JOB_SECONDS = 45.0
FAULT_NOTICE = "fault injection is ON"
"""otel_dynamo's one line per rank while OTEL_DYNAMO_FAULT is set (the trigger job sets it)."""
HELD_METRIC = "otelcol_processor_tail_sampling_sampling_traces_on_memory"


def _gauge(text: str, name: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and not line.startswith("#"):
            total += float(line.rsplit(" ", 1)[1])
    return total


@dataclasses.dataclass
class Restarted:
    """A job through a gateway that was killed and started again."""

    run: JobRun
    local: dict[str, Span]
    stored: dict[str, Span]
    killed_ns: int
    restarted_ns: int
    held_before_kill: float
    headline: dict[str, float]
    """The overview's headline totals of the job, read once its last metrics arrived."""
    gateway_log: str


@pytest.fixture(scope="module")
def gateway_restarted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Restarted]:
    _skip_without_programs()
    env = {
        "TRACE_SAMPLE_PERCENT": "100",
        "TAIL_SAMPLING_DECISION_WAIT": RESTART_DECISION_WAIT,
    }
    with running_pipeline(tmp_path_factory.mktemp("restarted"), gateway_env=env) as pipeline:
        job = start_job(
            pipeline, "otel-dynamo-e2e-restarted", kind="trigger", seconds=RESTART_JOB_SECONDS
        )
        gateway = pipeline.gateways[0]
        support.wait_until(lambda: _gauge(gateway.metrics(), HELD_METRIC) > 0, 120)
        time.sleep(10)
        held = _gauge(gateway.metrics(), HELD_METRIC)
        gateway.program.kill()
        killed = time.time_ns()
        time.sleep(OUTAGE_SECONDS)
        pipeline.start_gateway(0)
        restarted = time.time_ns()
        run = finish_job(job)
        assert run.returncode == 0, run.stderr[-4000:]
        local = file_spans(run.files)
        after = {sid for sid, span in local.items() if span.end_ns > killed}
        stored = _stored(pipeline.jaegers["memory"], run, after)
        time.sleep(_seconds(RESTART_DECISION_WAIT) + EXPORT_DELAY_SECONDS)
        stored = jaeger_spans(
            pipeline.jaegers["memory"], run.service, run.started_ns - 10**9, time.time_ns()
        )
        headline = _headline_totals(pipeline, run.service)
        log = "".join(g.program.output() for g in pipeline.gateways)
        yield Restarted(run, local, stored, killed, restarted, held, headline, log)


def test_job_time_not_hurt_by_a_gateway_outage(gateway_restarted: Restarted) -> None:
    """The job, whose gateway died for OUTAGE_SECONDS, ends normally: each rank's exit
    flush within OTEL_DYNAMO_SHUTDOWN_TIMEOUT's default (docs/production.md) plus the
    interpreter's own exit, and no export warning in its output."""
    run = gateway_restarted.run
    assert len(run.exit_seconds) == RANKS
    assert max(run.exit_seconds) < DEFAULT_SHUTDOWN_TIMEOUT_SECONDS + 0.5
    told = [line for line in run.stderr.splitlines() if re.search(r"(?i)export|otel_dynamo", line)]
    assert {line for line in told if FAULT_NOTICE not in line} == set(), run.stderr[-2000:]


def test_spans_the_agent_held_are_delivered_after_the_gateway_returns(
    gateway_restarted: Restarted,
) -> None:
    """Every span that ended after the kill (the agent queued and retried those sent
    during the outage) is in Jaeger, including some that ended during the outage."""
    r = gateway_restarted
    after = {sid for sid, span in r.local.items() if span.end_ns > r.killed_ns}
    during = {sid for sid in after if r.local[sid].end_ns < r.restarted_ns}
    assert during and sorted(after - set(r.stored)) == []


def test_only_what_the_killed_gateway_held_is_lost(gateway_restarted: Restarted) -> None:
    """The spans lost all ended before the kill, within the gateway's decision wait plus
    the export delays before it; their traces number no more than the killed gateway held
    in its sampling wait at the last reading before the kill (its traces_on_memory
    gauge), give or take what arrived in the second between."""
    r = gateway_restarted
    lost = set(r.local) - set(r.stored)
    assert lost, "the gateway held nothing when killed: the test measured no loss"
    window_ns = int((_seconds(RESTART_DECISION_WAIT) + EXPORT_DELAY_SECONDS) * 1e9)
    early = [
        sid for sid in lost if not r.killed_ns - window_ns <= r.local[sid].end_ns <= r.killed_ns
    ]
    assert early == []
    lost_traces = {r.local[sid].trace_id for sid in lost}
    assert r.held_before_kill > 0
    # The gauge is read just before the kill and updated once a second: a little slack.
    bound = r.held_before_kill + max(20.0, r.held_before_kill / 4)
    assert len(lost_traces) <= bound, (len(lost_traces), r.held_before_kill)


def test_metrics_arrive_whole_across_the_gateway_restart(
    gateway_restarted: Restarted, capsys: pytest.CaptureFixture[str]
) -> None:
    """The metrics the agent queued during the outage reach Prometheus when the gateway
    returns (replayed out of order, which a Prometheus with an out-of-order window
    accepts): no remote write is refused, and the headline totals equal the report's."""
    r = gateway_restarted
    assert "out of order" not in r.gateway_log and "Dropping data" not in r.gateway_log
    assert r.headline == _report_totals(r.run.files, capsys)
