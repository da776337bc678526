"""Per-graph debugging aids: what the traced backend applies to each graph it compiles,
besides recording it.

An aid is built for one graph (``AidedGraph``), acts just before the inner backend
compiles (``before_compile``), hears of a compile that failed (``compile_failed``) and
may wrap the compiled callable (``wrap_compiled``). The traced backend builds ``AIDS``
in order and applies them in order; a new per-graph feature is one more aid.

Why this order (innermost first: each aid wraps the runs of those before it, and the
traced backend's run recording wraps them all, so a recorded run's span is open while
each aid acts on it):

1. ``FaultInjection`` sits next to the backend: a runtime fault is a failure of the
   compiled graph as the other aids see it.
2. ``ReproScripts`` wraps the faulty runs, so a failing run (an injected fault
   included) gets its script; it reads the faults injected, to inject them again there.
3. ``AccuracyCheck`` wraps both: it checks what the graph, faults and all, computes on
   its first run, and hands a failed check to the repro aid for an ``accuracy`` script.

The graph as Dynamo made it is copied once, before any aid acts (an accuracy fault
rewrites the graph in place), for the aids that want it (``wants_original``).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from otel_dynamo._recording.boundary import guarded
from otel_dynamo._sources.aids.accuracy import AccuracyCheck
from otel_dynamo._sources.aids.faults import FaultInjection
from otel_dynamo._sources.aids.graph import (
    INSTRUMENTATION_ERROR,
    AidedGraph,
    AidKind,
    Compiling,
    GraphAid,
)
from otel_dynamo._sources.aids.repro import ReproScripts

if TYPE_CHECKING:
    from torch.fx import GraphModule

__all__ = ["AIDS", "AidedGraph", "Compiling", "GraphAid", "aids_for"]

AIDS: tuple[AidKind, ...] = (FaultInjection, ReproScripts, AccuracyCheck)
"""The aids, innermost first (the module docstring says why in this order)."""


def aids_for(graph: AidedGraph, compiling: Compiling) -> tuple[GraphAid, ...]:
    """The aids for ``graph``, in ``AIDS`` order; one that fails to build is left out."""
    settings = graph.recorder.settings
    original: GraphModule | None = None
    if any(kind.wants_original(settings) for kind in AIDS):
        with guarded(INSTRUMENTATION_ERROR):
            original = copy.deepcopy(compiling.gm)
    built: list[GraphAid] = []
    for kind in AIDS:
        with guarded(INSTRUMENTATION_ERROR):
            built.append(kind(graph, compiling, original, tuple(built)))
    return tuple(built)
