"""Telemetry names the processors use: attributes, span names and span-event names.

Each must be a name otel_dynamo emits (otel_dynamo/names.py) or a standard one; the
caller supplies both sets so this module needs no import of the package.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Any

from otelcol_check.model import Config, section, type_of

ATTRIBUTE = re.compile(r'attributes\["([^"]+)"\]')
NAME_EQ = re.compile(r'(?<![\w.])name\s*(?:==|!=)\s*"([^"]+)"')


@dataclasses.dataclass
class Used:
    """Names a config's processors refer to."""

    attributes: set[str] = dataclasses.field(default_factory=set)
    span_names: set[str] = dataclasses.field(default_factory=set)
    event_names: set[str] = dataclasses.field(default_factory=set)


def _policies(policies: list[Any]) -> Iterator[dict[str, Any]]:
    for policy in policies or []:
        if not isinstance(policy, dict):
            continue
        yield policy
        for nested in ("and", "drop", "composite"):
            block = policy.get(nested) or {}
            for key in ("and_sub_policy", "drop_sub_policy", "composite_sub_policy"):
                yield from _policies(block.get(key) or [])


def _statements(processor: dict[str, Any]) -> Iterator[str]:
    for key in ("trace_statements", "metric_statements", "log_statements"):
        for item in processor.get(key) or []:
            if isinstance(item, str):
                yield item
            elif isinstance(item, dict):
                yield from (s for s in item.get("statements") or [] if isinstance(s, str))
                yield from (s for s in item.get("conditions") or [] if isinstance(s, str))


def _ottl(text: str, used: Used, names: set[str]) -> None:
    used.attributes.update(ATTRIBUTE.findall(text))
    names.update(NAME_EQ.findall(text))


def used_names(config: Config) -> Used:
    """Collect the names tail_sampling policies and transform/filter statements use."""
    used = Used()
    for cid, processor in section(config, "processors").items():
        if not isinstance(processor, dict):
            continue
        if type_of(cid) == "tail_sampling":
            for policy in _policies(processor.get("policies") or []):
                for kind in ("numeric_attribute", "string_attribute", "boolean_attribute"):
                    if isinstance(policy.get(kind), dict) and policy[kind].get("key"):
                        used.attributes.add(str(policy[kind]["key"]))
                ottl = policy.get("ottl_condition") or {}
                for text in ottl.get("span") or []:
                    _ottl(text, used, used.span_names)
                for text in ottl.get("spanevent") or []:
                    _ottl(text, used, used.event_names)
        if type_of(cid) in ("transform", "filter"):
            for text in _statements(processor):
                _ottl(text, used, used.span_names)
    return used


def name_problems(
    config: Config, attributes: set[str], span_names: set[str], event_names: set[str]
) -> list[str]:
    """Names used by processors that are not among the known ones."""
    used = used_names(config)
    checks = (
        ("attribute", used.attributes, attributes),
        ("span name", used.span_names, span_names),
        ("span event name", used.event_names, event_names),
    )
    return [
        f"names: {what} '{name}' is not emitted by otel_dynamo (names.py) nor standard"
        for what, found, known in checks
        for name in sorted(found - known)
    ]
