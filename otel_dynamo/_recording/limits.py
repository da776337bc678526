"""Length caps applied to every attribute value otel_dynamo records."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterable
from typing import Any

from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._config.settings import Settings
from otel_dynamo._recording.capture import captured, graph_without_source
from otel_dynamo._recording.stream_events import GraphBreakReported, GraphTextReported
from otel_dynamo.causes import fixes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from otel_dynamo._recording.records import FrameCompiled

ELLIPSIS = "…"


@dataclasses.dataclass(frozen=True)
class Limits:
    text_length: int
    list_length: int
    capture_stacks: bool
    top_ops: int
    capture_values: bool = True
    graph_text_length: int = 0
    """Cap on a graph's text; 0: graph texts are not captured."""

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(
            text_length=settings.max_attribute_length,
            list_length=settings.max_list_length,
            capture_stacks="stacks" in settings.capture,
            top_ops=settings.top_ops,
            capture_values="values" in settings.capture,
            graph_text_length=(
                settings.max_graph_text_length if "graphs" in settings.capture else 0
            ),
        )

    def reason(self, text: str) -> str:
        """A Dynamo reason (recompile, guard, graph break) as the capture setting allows:
        without its quoted source lines unless ``stacks``, its literals unless ``values``."""
        return captured(text, source=self.capture_stacks, values=self.capture_values)

    def text(self, value: Any) -> str:
        text = "" if value is None else str(value)
        if len(text) <= self.text_length:
            return text
        return text[: self.text_length - 1] + ELLIPSIS

    def strings(self, values: Iterable[Any]) -> list[str]:
        """Each string capped, the list capped (the last item says how many were left out)."""
        items = [self.text(value) for value in values]
        if len(items) <= self.list_length:
            return items
        kept = items[: self.list_length - 1]
        return [*kept, f"{ELLIPSIS} {len(items) - len(kept)} more"]

    def break_attributes(self, event: GraphBreakReported) -> dict[str, AttributeValue]:
        attributes: dict[str, AttributeValue] = {
            names.ATTR_GRAPH_BREAK_REASON: self.text(event.reason)
        }
        if event.kind:  # a graph's own break reason (gm.compile_subgraph_reason) has no kind
            attributes[names.ATTR_GRAPH_BREAK_KIND] = self.text(event.kind)
        if self.capture_stacks:
            attributes[names.ATTR_GRAPH_BREAK_USER_STACK] = self.strings(event.user_stack)
        if event.hints:
            attributes[names.ATTR_GRAPH_BREAK_HINTS] = self.strings(event.hints)
        if event.url:
            attributes[names.ATTR_GRAPH_BREAK_URL] = self.text(event.url)
        summary = fixes.break_summary(
            event.reason,
            event.user_stack if self.capture_stacks else (),
            hints=tuple(event.hints),
            url=event.url,
            torch_version=loaded_torch_version(),
        )
        attributes[names.ATTR_FIX_SUMMARY] = self.text(summary)
        return attributes

    def graph_text_attributes(self, event: GraphTextReported) -> dict[str, AttributeValue]:
        """The graph text as the capture setting allows, capped, with its full length.

        Guard text is a Dynamo reason like the others (source lines and values as
        captured); a graph keeps its values (``graphs`` needs ``values``) and loses the
        ``# File:`` source lines without ``stacks``.
        """
        if event.kind == names.GRAPH_TEXT_GUARDS:
            text = self.reason(event.text)
        elif not self.capture_stacks:
            text = graph_without_source(event.text)
        else:
            text = event.text
        truncated = len(text) > self.graph_text_length
        attributes: dict[str, AttributeValue] = {
            names.ATTR_GRAPH_TEXT_KIND: event.kind,
            names.ATTR_GRAPH_TEXT_LENGTH: len(text),
            names.ATTR_GRAPH_TEXT_TRUNCATED: truncated,
            names.ATTR_GRAPH_TEXT_MAX_LENGTH: self.graph_text_length,
            names.ATTR_GRAPH_TEXT: (
                text[: self.graph_text_length - 1] + ELLIPSIS if truncated else text
            ),
        }
        if event.path and self.capture_stacks:
            attributes[names.ATTR_GRAPH_TEXT_PATH] = event.path
        return attributes


def loaded_torch_version() -> str | None:
    """The version of the torch this process imported (None before it did): read from
    the loaded module, never by importing it."""
    torch = sys.modules.get("torch")
    version = getattr(torch, "__version__", None)
    return str(version) if version is not None else None


def recompile_code(record: FrameCompiled) -> fixes.Code:
    """The compiled function of a recompile, as a fix needs it."""
    return fixes.Code(
        record.ended.function,
        record.ended.file,
        record.ended.line,
        record.arguments,
        loaded_torch_version(),
    )
