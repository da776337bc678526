"""TraceQL builders for otel_dynamo's spans in Tempo."""

from __future__ import annotations

from dashgen import catalog

SERVICE = "resource.service.name"


def attr(constant: str) -> str:
    """``span.<attribute>`` of an ATTR_* constant."""
    return f"span.{catalog.name(constant)}"


def resource(constant: str) -> str:
    """``resource.<attribute>`` of a RESOURCE_* constant."""
    return f"resource.{catalog.name(constant)}"


def span_name(*constants: str) -> str:
    """Condition on the span name being one of the SPAN_* constants."""
    parts = [f'name = "{catalog.name(c)}"' for c in constants]
    return parts[0] if len(parts) == 1 else "(" + " || ".join(parts) + ")"


def spanset(*conditions: str) -> str:
    return "{ " + " && ".join(conditions) + " }"


def select(query: str, *constants: str) -> str:
    """Append ``| select(...)`` so the table shows these span attributes."""
    return f"{query} | select({', '.join(attr(c) for c in constants)})"
