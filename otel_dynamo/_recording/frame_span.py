"""The frame span's writer: a frame compile's record as the span's attributes."""

from __future__ import annotations

from collections.abc import Iterator

from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._recording.limits import Limits, recompile_code
from otel_dynamo._recording.records import FrameCompiled
from otel_dynamo.causes import fixes


def frame_attributes(record: FrameCompiled, limits: Limits) -> dict[str, AttributeValue]:
    """What the frame span carries at its end (its compile-time split aside)."""
    ended = record.ended
    attributes: dict[str, AttributeValue] = {
        **record.code_fields(),
        names.ATTR_OUTCOME: record.outcome,
        names.ATTR_FRAME_GRAPH_COUNT: record.graph_count,
        names.ATTR_GUARD_COUNT: ended.guard_count,
        names.ATTR_GRAPH_BREAK_COUNT: len(record.breaks),
        names.ATTR_GRAPH_BREAK_REASONS: limits.strings(brk.reason for brk in record.breaks),
    }
    if ended.cache_size is not None:
        attributes[names.ATTR_FRAME_CACHE_SIZE] = ended.cache_size
    if record.discarded_graph_count:
        attributes[names.ATTR_FRAME_DISCARDED_GRAPH_COUNT] = record.discarded_graph_count
    attributes.update(_optional_attributes(record, limits))
    if record.backend and names.ATTR_BACKEND not in attributes:  # the recorder's backend
        attributes[names.ATTR_BACKEND] = record.backend
    return attributes


def _optional_attributes(
    record: FrameCompiled, limits: Limits
) -> Iterator[tuple[str, AttributeValue]]:
    ended = record.ended
    if record.recompile_reason:
        yield names.ATTR_RECOMPILE_REASON, record.recompile_reason
        summary = fixes.recompile_summary(record.recompile_reason, recompile_code(record))
        if summary:
            yield names.ATTR_FIX_SUMMARY, limits.text(summary)
    if record.guards:
        yield names.ATTR_GUARDS, limits.strings(record.guards)
    if ended.restart_reasons:
        yield names.ATTR_FRAME_RESTART_REASONS, limits.strings(ended.restart_reasons)
    if ended.fail_reason:
        yield names.ATTR_FRAME_FAIL_REASON, limits.text(ended.fail_reason)
    if record.graphs_backend:
        yield names.ATTR_BACKEND, record.backend
    yield from ended.cache_counts.items()
    yield from ended.timings.items()
    # Torch's metrics count hits and misses (not before 2.9) but never bypasses: the
    # lookups we saw count whatever they do not.
    for key, count in record.cache_counts.items():
        if key not in ended.cache_counts:
            yield key, count
    if ended.triton_kernel_compile_times:
        yield names.ATTR_TRITON_KERNEL_COMPILE_TIMES, limits.text(ended.triton_kernel_compile_times)
    if ended.cudagraph_skip_reason:
        yield names.ATTR_CUDAGRAPH_SKIP_REASON, limits.text(ended.cudagraph_skip_reason)
