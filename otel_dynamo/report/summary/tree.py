"""Parent, child and link relations among the spans of one process."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from otel_dynamo import names
from otel_dynamo.report.read.model import Span


class SpanTree:
    """Spans of one process by id, with their children; frames found through parents or links."""

    def __init__(self, spans: Iterable[Span]) -> None:
        self.by_id: dict[str, Span] = {}
        self._children: dict[str, list[Span]] = defaultdict(list)
        for span in spans:
            self.by_id[span.span_id] = span
            if span.parent_span_id:
                self._children[span.parent_span_id].append(span)

    def children(self, span_id: str) -> list[Span]:
        """The spans whose parent is ``span_id``."""
        return list(self._children.get(span_id, ()))

    def descendants(self, frame: Span) -> list[Span]:
        """The spans beneath a frame span, without those of frames nested in it, in
        ``walk``'s order (this runs once per frame compile: no depths)."""
        found: list[Span] = []
        seen = {frame.span_id}
        pending = [frame.span_id]
        children_of = self._children.get
        frame_name = names.SPAN_FRAME
        while pending:
            for child in children_of(pending.pop(), ()):
                span_id = child.span_id
                if span_id not in seen and child.name != frame_name:
                    seen.add(span_id)
                    found.append(child)
                    pending.append(span_id)
        return found

    def walk(self, frame: Span) -> list[tuple[Span, int]]:
        """A frame span and everything beneath it, each with its depth below the frame.

        A frame compiled while another compiles is its own compile: not descended into.
        """
        found = [(frame, 0)]
        seen = {frame.span_id}  # a malformed file may hold a parent cycle
        pending = [(frame.span_id, 1)]
        while pending:
            span_id, depth = pending.pop()
            for child in self._children.get(span_id, ()):
                if child.span_id not in seen and child.name != names.SPAN_FRAME:
                    seen.add(child.span_id)
                    found.append((child, depth))
                    pending.append((child.span_id, depth + 1))
        return found

    def enclosing_frame(self, span: Span) -> Span | None:
        """The frame span ``span`` was recorded under, or else the one it links to.

        Run spans are children of the user's span (e.g. a training step) and link to
        the graph span that compiled them, so parents are tried first, then links.
        """
        seen: set[str] = set()
        pending = [span]
        while pending:
            chain = self._ancestors(pending.pop(0), seen)
            frame = next((found for found in chain if found.name == names.SPAN_FRAME), None)
            if frame is not None:
                return frame
            pending += [self.by_id[i] for s in chain for i in s.linked_span_ids if i in self.by_id]
        return None

    def _ancestors(self, span: Span, seen: set[str]) -> list[Span]:
        """``span`` and its parents, outward, skipping spans already looked at."""
        chain: list[Span] = []
        current: Span | None = span
        while current is not None and current.span_id not in seen:
            seen.add(current.span_id)
            chain.append(current)
            current = self.by_id.get(current.parent_span_id)
        return chain
