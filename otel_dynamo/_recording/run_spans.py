"""Start run spans: one per recorded execution of a compiled graph.

A graph's run spans share their name, attributes and link: :class:`RunSpanParts` holds
them once per graph, and each span is started by the tracer's own public ``start_span``
with the run index added. Which runs are recorded is the run-span policy's choice
(``OTEL_DYNAMO_RUN_SPANS``; by default the first three and then runs 4, 8, 16, ...), so
the cost of ``start_span`` is paid a few times per graph, not per call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from opentelemetry import trace
from opentelemetry.trace import Link, Span, SpanContext
from opentelemetry.util.types import AttributeValue

from otel_dynamo import names


@dataclasses.dataclass(frozen=True)
class RunSpanParts:
    """What every run span of one graph shares."""

    name: str
    attributes: Mapping[str, AttributeValue]
    links: tuple[Link, ...]


class RunSpans:
    """Run spans from the tracer's own ``start_span`` (any OpenTelemetry tracer; a
    ``SafeTracer`` never raises)."""

    def __init__(self, tracer: trace.Tracer) -> None:
        self._tracer = tracer

    def parts(
        self, name: str, attributes: Mapping[str, AttributeValue], link: SpanContext | None
    ) -> RunSpanParts:
        links = (Link(link),) if link is not None and link.is_valid else ()
        return RunSpanParts(name, dict(attributes), links)

    def start(self, parts: RunSpanParts, index: int) -> Span:
        attributes = {**parts.attributes, names.ATTR_RUN_INDEX: index}
        return self._tracer.start_span(parts.name, links=parts.links, attributes=attributes)
