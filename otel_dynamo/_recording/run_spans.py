"""Start run spans: one per recorded execution of a compiled graph.

The SDK's ``start_span`` validates every attribute and link again for every span and
builds a handful of helper objects: ~17 us on a quiet 2-core machine, ~27 us inside a
training loop, more than many compiled runs take. A graph's run spans differ only in
ids, times, parent and run index, so :class:`LeanRunSpans` validates the rest once per
graph (:class:`RunSpanParts`) and builds each span from those parts: the same SDK span
class, started and ended by the SDK's own ``start()`` and ``end()``, so span
processors and exporters see exactly what ``start_span`` would have given them.

The lean path reads SDK fields that are not public API, so it is taken only when the
tracer is the SDK's own ``Tracer`` with the SDK's own samplers, and when a span the
SDK's constructor builds has exactly the fields this module sets. Otherwise, or after
any error in it, :class:`StandardRunSpans` calls ``start_span``.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from typing import Any, Protocol, TypeGuard

from opentelemetry import trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk import trace as sdk_trace
from opentelemetry.sdk.trace import sampling
from opentelemetry.sdk.util import BoundedList
from opentelemetry.trace import Link, Span, SpanContext, SpanKind, TraceFlags, TraceState
from opentelemetry.trace.status import Status, StatusCode

from otel_dynamo import names
from otel_dynamo._providers import sdk_private
from otel_dynamo._recording.boundary import SafeTracer, report_internal_error

_UNSET_STATUS = Status(StatusCode.UNSET)
_PROBE_CONTEXT = SpanContext(trace_id=1, span_id=1, is_remote=False)
_RANDOM_FLAG: int | None = getattr(TraceFlags, "RANDOM_TRACE_ID", None)
"""The trace flag for a random trace id, where the installed API has it (1.39 on)."""

_ParentKind = tuple[bool, bool] | None
"""What static samplers decide on: no parent, or the parent's remote and sampled flags."""


@dataclasses.dataclass(frozen=True)
class RunSpanParts:
    """What every run span of one graph shares, validated once."""

    name: str
    attributes: Mapping[str, Any]  # as the SDK keeps them: cleaned, within the limits
    dropped_attributes: int
    links: tuple[Link, ...]
    room_for_index: bool = False  # the run index fits without dropping an attribute


class RunSpans(Protocol):
    def parts(
        self, name: str, attributes: Mapping[str, Any], link: SpanContext | None
    ) -> RunSpanParts: ...

    def start(self, parts: RunSpanParts, index: int) -> Span: ...


class StandardRunSpans:
    """Run spans from the tracer's own ``start_span`` (any OpenTelemetry tracer)."""

    def __init__(self, tracer: trace.Tracer) -> None:
        self._tracer = tracer

    def parts(
        self, name: str, attributes: Mapping[str, Any], link: SpanContext | None
    ) -> RunSpanParts:
        links = (Link(link),) if link is not None else ()
        return RunSpanParts(name, dict(attributes), 0, links)

    def start(self, parts: RunSpanParts, index: int) -> Span:
        attributes = {**parts.attributes, names.ATTR_RUN_INDEX: index}
        return self._tracer.start_span(parts.name, links=parts.links, attributes=attributes)


class _RunSpan(sdk_trace.Span):
    """The SDK span, built from prepared parts instead of by ``Span.__init__``."""


class LeanRunSpans:
    """Run spans for an SDK tracer, built from per-graph parts (see the module doc)."""

    def __init__(self, tracer: sdk_trace.Tracer, *, fallback: RunSpans) -> None:
        self._tracer = tracer
        self._limits = sdk_private.tracer_span_limits(tracer)
        self._is_enabled = sdk_private.tracer_enabled_check(tracer)
        self._start_span_metrics = sdk_private.tracer_span_metrics_starter(tracer)
        self._fallback = fallback
        # Keyed by the parent's kind (none, or remote and sampled flags): the only thing
        # the SDK's static and parent-based samplers decide on.
        self._static_decisions: dict[_ParentKind, sampling.Decision] | None = (
            {} if _static_sampler(tracer.sampler) else None
        )
        self._broken = False
        self._fixed_fields = {
            "_kind": SpanKind.INTERNAL,
            "_instrumentation_info": tracer.instrumentation_info,
            "_instrumentation_scope": sdk_private.tracer_scope(tracer),
            "_start_time": None,
            "_end_time": None,
            "_status": _UNSET_STATUS,
            "_sampler": tracer.sampler,
            "_trace_config": None,
            "_record_exception": True,
            "_set_status_on_exception": True,
            "_span_processor": tracer.span_processor,
            "_limits": self._limits,
        }

    def field_names(self) -> set[str]:
        """Every instance field a lean span gets (the end of span metrics where the SDK
        counts its spans: 1.39 on)."""
        per_span = {"_name", "_context", "_parent", "_resource", "_attributes", "_events"}
        counted = set() if self._start_span_metrics is None else {"_record_end_metrics"}
        return {*self._fixed_fields, *per_span, "_links", "_lock", *counted}

    def parts(
        self, name: str, attributes: Mapping[str, Any], link: SpanContext | None
    ) -> RunSpanParts:
        limits = self._limits
        cleaned = BoundedAttributes(
            limits.max_span_attributes, attributes, max_value_len=limits.max_span_attribute_length
        )
        links: tuple[Link, ...] = ()
        if link is not None and link.is_valid:
            empty = BoundedAttributes(
                limits.max_link_attributes, None, max_value_len=limits.max_attribute_length
            )
            links = (Link(link, empty),)
        fits = limits.max_span_attributes is None or len(cleaned) < limits.max_span_attributes
        room = fits and names.ATTR_RUN_INDEX not in cleaned
        return RunSpanParts(name, dict(cleaned.items()), cleaned.dropped, links, room)

    def start(self, parts: RunSpanParts, index: int) -> Span:
        if not self._broken:
            try:
                return self._start_lean(parts, index)
            except Exception:
                self._broken = True
                report_internal_error("lean run spans failed; using the SDK's start_span")
        return self._fallback.start(parts, index)

    def _start_lean(self, parts: RunSpanParts, index: int) -> Span:
        current = trace.get_current_span().get_span_context()
        if not self._is_enabled():
            return trace.NonRecordingSpan(current)
        parent = current if current.is_valid else None
        context, decision = self._sampled_context(parent, parts)
        start_metrics = self._start_span_metrics
        record_end_metrics = None if start_metrics is None else start_metrics(parent, decision)
        if not decision.is_recording():  # type: ignore[no-untyped-call]  # untyped in the SDK
            return trace.NonRecordingSpan(context)
        span = self._build(parts, index, context, parent)
        if start_metrics is not None:
            span._record_end_metrics = record_end_metrics
        return _started(span)

    def _sampled_context(
        self, parent: SpanContext | None, parts: RunSpanParts
    ) -> tuple[SpanContext, sampling.Decision]:
        ids = self._tracer.id_generator
        trace_id = ids.generate_trace_id() if parent is None else parent.trace_id
        decision, trace_state = self._sample(parent, trace_id, parts)
        sampled = decision.is_sampled()  # type: ignore[no-untyped-call]  # untyped in the SDK
        flags = TraceFlags.SAMPLED if sampled else TraceFlags.DEFAULT
        if _RANDOM_FLAG is not None:  # W3C's random trace-id flag, set by the SDK from 1.39
            random_id = parent.trace_flags.random_trace_id if parent else ids.is_trace_id_random()
            if random_id:
                flags |= _RANDOM_FLAG
        span_id = ids.generate_span_id()
        return SpanContext(trace_id, span_id, False, TraceFlags(flags), trace_state), decision

    def _sample(
        self, parent: SpanContext | None, trace_id: int, parts: RunSpanParts
    ) -> tuple[sampling.Decision, TraceState | None]:
        kind: _ParentKind = (
            None if parent is None else (parent.is_remote, parent.trace_flags.sampled)
        )
        decision = self._static_decisions.get(kind) if self._static_decisions is not None else None
        if decision is not None:  # what the static sampler said for this kind of parent
            return decision, None if parent is None else parent.trace_state
        result = self._tracer.sampler.should_sample(
            None, trace_id, parts.name, SpanKind.INTERNAL, parts.attributes, parts.links
        )
        if self._static_decisions is not None:
            self._static_decisions[kind] = result.decision
        return result.decision, result.trace_state

    def _build(
        self, parts: RunSpanParts, index: int, context: SpanContext, parent: SpanContext | None
    ) -> _RunSpan:
        limits = self._limits
        span = object.__new__(_RunSpan)  # Span.__new__ only refuses the bare Span class
        span.__dict__ = {
            **self._fixed_fields,
            "_name": parts.name,
            "_context": context,
            "_parent": parent,
            "_resource": self._tracer.resource,  # the provider may replace it later
            "_lock": threading.Lock(),
            "_events": BoundedList(limits.max_events),
            "_links": self._links(parts),
            "_attributes": self._attributes(parts, index),
        }
        return span

    def _links(self, parts: RunSpanParts) -> BoundedList[Link]:
        links: BoundedList[Link] = BoundedList(self._limits.max_links)
        if parts.links:
            links.extend(parts.links)
        return links

    def _attributes(self, parts: RunSpanParts, index: int) -> BoundedAttributes:
        limits = self._limits
        attributes = BoundedAttributes(
            limits.max_span_attributes,
            None,
            immutable=False,
            max_value_len=limits.max_span_attribute_length,
        )
        attributes.dropped = parts.dropped_attributes
        if parts.room_for_index:
            sdk_private.fill_bounded_attributes(
                attributes, {**parts.attributes, names.ATTR_RUN_INDEX: index}
            )
        else:  # full: the index displaces the oldest attribute, as the SDK does
            sdk_private.fill_bounded_attributes(attributes, parts.attributes)
            attributes[names.ATTR_RUN_INDEX] = index
        return attributes


def _started(span: _RunSpan) -> Span:
    """The span, started; a span processor failing at its start gives a no-op span, as
    with :class:`SafeTracer` (not a reason to leave the lean path)."""
    try:
        span.start()
    except Exception:
        report_internal_error("a span processor failed at span start")
        return trace.INVALID_SPAN
    return span


def run_spans_for(tracer: trace.Tracer) -> RunSpans:
    """Lean run spans where the tracer allows them, else the tracer's ``start_span``.

    ``tracer`` may be a :class:`SafeTracer`: the lean path checks the tracer it
    wraps, and falls back to the SafeTracer itself.
    """
    standard = StandardRunSpans(tracer)
    inner = tracer.inner if isinstance(tracer, SafeTracer) else tracer
    try:
        if _sdk_tracer(inner):
            lean = LeanRunSpans(inner, fallback=standard)
            if lean.field_names() == _sdk_span_fields(inner):
                return lean
    except Exception:
        report_internal_error("could not check the tracer for lean run spans")
    return standard


def _sdk_tracer(tracer: trace.Tracer) -> TypeGuard[sdk_trace.Tracer]:
    """The SDK's own tracer and samplers, with the fields the lean path reads."""
    if type(tracer) is not sdk_trace.Tracer or not _sdk_sampler(tracer.sampler):
        return False
    return sdk_private.tracer_fields_present(tracer)


def _sampler_tree(sampler: sampling.Sampler) -> list[sampling.Sampler]:
    """The sampler and, for a parent-based one, its delegates, all the way down."""
    delegates = [value for value in vars(sampler).values() if isinstance(value, sampling.Sampler)]
    return [sampler, *(inner for delegate in delegates for inner in _sampler_tree(delegate))]


def _sdk_sampler(sampler: sampling.Sampler) -> bool:
    """The SDK's own samplers return the attributes they are given: a span's stay ours."""
    return all(type(each).__module__ == sampling.__name__ for each in _sampler_tree(sampler))


def _static_sampler(sampler: sampling.Sampler) -> bool:
    """Always on/off, or parent-based over those: decisions that ignore the trace id."""
    static = (sampling.StaticSampler, sampling.ParentBased)
    return all(type(each) in static for each in _sampler_tree(sampler))


def _sdk_span_fields(tracer: sdk_trace.Tracer) -> set[str]:
    """The fields the SDK's own constructor gives a span (built, never started)."""
    probe = _RunSpan(
        name="probe",
        context=_PROBE_CONTEXT,
        resource=tracer.resource,
        limits=sdk_private.tracer_span_limits(tracer),
        instrumentation_scope=sdk_private.tracer_scope(tracer),
    )
    return set(vars(probe))
