"""Plain, typed values passed between the torch-facing sources and the recorder.

Sources know torch and produce these; the recorder knows OpenTelemetry and consumes
them. Nothing here imports torch or OpenTelemetry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping


@dataclasses.dataclass(frozen=True)
class FrameStarted:
    """Dynamo began compiling a frame (structured-trace ``dynamo_start``)."""

    compile_id: str
    time_ns: int
    code: CodeLocation | None = None
    """The function being compiled, known from the start (so a compile that never ends
    still says which)."""
    settings: CompileSettings | None = None
    """How it was asked to be compiled."""


@dataclasses.dataclass(frozen=True)
class CompileSettings:
    """How a frame was asked to be compiled: ``torch.compile``'s arguments as torch kept
    them (``None``: not given, or not compiled through ``torch.compile``)."""

    mode: str | None = None
    options: str | None = None
    """The options beyond the mode, as JSON with sorted keys."""
    dynamic: bool | None = None
    fullgraph: bool | None = None


@dataclasses.dataclass(frozen=True)
class CodeLocation:
    """A function's name, file and first line."""

    function: str
    file: str
    line: int
    module_class: str | None = None
    """Qualified class of the ``torch.nn.Module`` the frame was called on (its first
    argument, ``self``), when it was one: e.g. ``torch.compile(model)`` compiles the frame
    of ``model.forward`` or of the decorator wrapper standing for it."""
    arguments: tuple[str, ...] = ()
    """The function's parameters, in order (``self`` included)."""


@dataclasses.dataclass(frozen=True)
class FrameEnded:
    """Dynamo finished a frame compile: what its compilation metrics say, in plain fields."""

    compile_id: str
    time_ns: int
    start_ns: int | None = None
    """When Dynamo started the frame, if it said (a frame with no start event)."""
    function: str | None = None
    file: str | None = None
    line: int | None = None
    guard_count: int = 0
    cache_size: int | None = 0
    """Cache entries of the code before this compile; None when torch did not say (a
    compile that hit the recompile limit)."""
    graph_op_count: int = 0
    """Ops in the graph Dynamo traced last (torch's ``count_calls``): none means no graph
    went to the backend, whatever its placeholders."""
    fail_type: str | None = None
    fail_reason: str | None = None
    recompile_reason: str | None = None
    """The failed guard that caused this compile: its first line, no compile-id prefix."""
    restart_reasons: tuple[str, ...] = ()
    cache_counts: Mapping[str, int] = dataclasses.field(default_factory=dict)
    """Cache and compile-time figures of CompilationMetrics, keyed by our attribute names."""
    timings: Mapping[str, float] = dataclasses.field(default_factory=dict)
    """Seconds of CompilationMetrics (guard latency, Triton compile time), by attribute."""
    triton_kernel_compile_times: str | None = None
    cudagraph_skip_reason: str | None = None
    gave_up: bool = False
    """Dynamo left the frame to eager with neither a failure nor any traced output (a
    ``SkipFrame`` that says nothing else; see ``dynamo_stream.gave_up_silently``)."""


@dataclasses.dataclass(frozen=True)
class GraphBreakReported:
    """One ``dynamo_graph_break_reason`` artifact, parsed."""

    compile_id: str
    reason: str
    kind: str
    user_stack: tuple[str, ...]
    skipped_frame: bool
    hints: tuple[str, ...] = ()
    """torch's ``Hint:`` lines for this break, in its order."""
    url: str | None = None
    """The page torch links for this kind of break."""

    def skipping_the_frame(self) -> GraphBreakReported:
        """This break as the one that made Dynamo skip its frame (learnt at the frame's end)."""
        if self.skipped_frame:
            return self
        return dataclasses.replace(
            self,
            reason=f"{SKIPPED_FRAME_PREFIX}{self.reason}",
            kind=SKIPPED_FRAME_KIND,
            skipped_frame=True,
        )


SKIPPED_FRAME_KIND = "skip"
"""Graph-break kind of a break that made Dynamo skip the whole frame."""
SKIPPED_FRAME_PREFIX = "frame skipped: "


@dataclasses.dataclass(frozen=True)
class RecompileReported:
    """One ``recompile_reasons`` artifact: why the cached entries' guards failed."""

    compile_id: str
    reasons: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class GuardsReported:
    """The guard tree Dynamo built for a frame, one guard per entry."""

    compile_id: str
    guards: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class PhaseBoundary:
    """One Dynamo ``chromium_event`` begin (``B``) or end (``E``) of a timed phase."""

    compile_id: str
    name: str
    begin: bool
    time_ns: int


@dataclasses.dataclass(frozen=True)
class LazyBackwardStarted:
    """AOT Autograd began compiling a backward lazily, at its first run (after the frame)."""

    compile_id: str
    time_ns: int


@dataclasses.dataclass(frozen=True)
class LazyBackwardEnded:
    """That lazy backward compile ended."""

    compile_id: str
    time_ns: int


@dataclasses.dataclass(frozen=True)
class GraphTextReported:
    """The text of a graph Dynamo, AOT Autograd or inductor made for a compile, or of the
    frame's guard tree (structured-trace ``dynamo_output_graph``, ``aot_*_graph``,
    ``inductor_output_code``, ``dynamo_cpp_guards_str``)."""

    compile_id: str
    kind: str
    """One of ``names.GRAPH_TEXT_KINDS``."""
    text: str
    path: str | None = None
    """Where inductor wrote its output code."""
    run_kind: str | None = None
    """The compiled graph the text belongs to: forward, backward or inference (AOT
    Autograd's graphs and inductor's output code); None for Dynamo's graph and guards."""
    attempt: int | None = None
    """Dynamo's analysis attempt of the compile that made the text, from 0 (each restart
    of the analysis adds one: texts of an earlier attempt were thrown away)."""


@dataclasses.dataclass(frozen=True)
class CacheLookup:
    """One compile cache lookup torch reported (``fx_graph_cache_<state>``,
    ``aotautograd_cache_<state>`` artifacts)."""

    compile_id: str
    cache: str
    state: str
    reason: str | None = None
