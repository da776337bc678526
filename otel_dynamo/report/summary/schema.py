"""The report summary's shape: one definition that the summary builder writes and the
terminal, HTML page, ``--json``, diff and rank comparison read.

TypedDicts, so the summary stays plain JSON data (``--json`` prints it as it is, ``diff``
reads it back) while ``mypy --strict`` checks every key. docs/report-json.md documents
every key; a test walks these types against it.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from otel_dynamo.causes.records import Fix

OptionalSeconds = float | None


class Location(TypedDict):
    """The compiled code: function name, file and first line (each null when unknown)."""

    function: str | None
    file: str | None
    line: int | None


class CompileRow(Location):
    """One frame compile (a compile id)."""

    module: str | None
    """Qualified class of the ``torch.nn.Module`` the compiled code ran on (``self``),
    when it was one; ``function`` stays the code's own name (a decorator's ``wrapper``)."""
    compile_id: str | None
    outcome: str
    start_unix_nano: int
    duration_s: float
    lazy_backward_s: float
    compile_s: float
    graphs: int
    discarded_graphs: int
    ops: int
    guards: int | None
    cache_size: int | None
    is_recompile: bool
    recompile_reason: str | None
    graph_breaks: int
    calls: int | None
    backward_calls: int | None
    call_share: float | None
    hot: bool | None
    phases: dict[str, OptionalSeconds]
    phase_details: dict[str, OptionalSeconds]
    dynamo_phases: dict[str, float]
    error_type: str | None
    error_message: str | None
    compiled_with: str | None
    """How the frame was asked to be compiled: backend, then the mode, ``fullgraph``,
    ``dynamic=...`` and the options where they are not torch.compile's defaults."""


class StackCount(TypedDict):
    """A distinct user stack ("file:line in function", innermost last), its count, and
    the compile ids of the frame compiles that broke there."""

    user_stack: list[str]
    count: int
    compile_ids: list[str]


class GraphBreakGroup(TypedDict):
    """The graph breaks of one reason."""

    reason: str
    kind: str | None
    torch_hints: list[str]
    """torch's own hints for this break, as the torch that ran stated them."""
    torch_url: str | None
    """The page torch links for this kind of break."""
    count: int
    compile_ids: list[str]
    stacks: list[StackCount]
    fixes: list[Fix]
    """What to do about it: the fixes of its cause at each of its stacks' user code."""


class RecompileRow(Location):
    """A recompile and the guard that failed."""

    module: str | None
    compile_id: str | None
    reason: str | None
    reason_plain: str | None
    cache_size: int | None
    calls: int | None
    call_share: float | None
    hot: bool | None
    fixes: list[Fix]
    """What to do about it: the fixes of each cause its failed guards name."""


CauseKind = Literal["recompile", "graph_break", "recompile_limit"]


class CauseRow(Location):
    """One cause: a (code location, kind, subject) however many recompiles or breaks it
    made, what it cost, the entries of ``recompiles`` and ``graph_breaks`` it made, and
    its fixes."""

    kind: CauseKind
    module: str | None
    """As in ``recompiles``: the module class the function ran on (for a break, where its
    frame compiles name one class)."""
    subject: str
    what: str
    recompiles: int
    graph_breaks: int
    compile_seconds: float
    recompile_ids: list[str]
    graph_break_reasons: list[str]
    fixes: list[Fix]


LimitStatus = Literal["at_limit", "near_limit"]


class LimitRow(Location):
    """Code whose cache entries reach the recompile limit or come near it."""

    compiles: int
    recompiles: int
    max_cache_size: int | None
    cache_entries: int
    limit: int
    status: LimitStatus


class SlowCompile(Location):
    """One of the slowest frame compiles."""

    module: str | None
    compile_id: str | None
    outcome: str
    duration_s: float
    lazy_backward_s: float
    compile_s: float
    phases: dict[str, OptionalSeconds]
    phase_details: dict[str, OptionalSeconds]


class ErrorFields(TypedDict):
    """A span's error: the qualified exception type and its message."""

    error_type: str | None
    error_message: str | None


class Failure(ErrorFields):
    """A failed compile or run."""

    stage: str
    compile_id: str | None
    function: str | None
    span: str


class Fault(TypedDict):
    """An injected fault."""

    kind: str | None
    target: str | None
    compile_id: str | None
    source: str


class AccuracyCheck(TypedDict):
    """An accuracy check of compiled against eager."""

    compile_id: str | None
    passed: bool
    max_abs_error: float | None
    max_rel_error: float | None
    source: str


class DeviceTime(TypedDict):
    """Device time of one graph's timed runs (CUDA)."""

    compile_id: str
    run_kind: str
    device: str
    timed_runs: int
    device_s: float
    mean_device_s: float
    max_device_s: float


class CudagraphSkip(Location):
    """A graph inductor did not CUDA-graph, and torch's reason."""

    compile_id: str
    run_kind: str
    at: str
    reason: str
    category: str
    partitions: int


class Cudagraphs(TypedDict):
    """Inductor's CUDA-graph decisions."""

    graphs: int
    graphed: int
    skipped: int
    skips: list[CudagraphSkip]


class BypassReason(TypedDict):
    """Why a compile cache was bypassed, and how often."""

    cache: str
    reason: str
    count: int


class Caches(TypedDict):
    """The compile caches: lookups per state, bypass reasons, frames served warm."""

    inductor_fx: dict[str, int]
    aot_autograd: dict[str, int]
    bypass_reasons: list[BypassReason]
    warm_frames: int
    warm_compile_s: float


class Unfinished(Location):
    """A compile announced by still_compiling events that never finished."""

    compile_id: str
    elapsed_s: float | None
    last_seen_unix_nano: int


class ExportRow(TypedDict):
    """One ``torch.export.export`` call."""

    module_class: str | None
    strict: bool | None
    dynamic_shapes: bool | None
    start_unix_nano: int
    duration_s: float
    outcome: str
    op_count: int | None
    node_count: int | None
    parameter_count: int | None
    buffer_count: int | None
    ops: list[str]
    error_type: str | None
    error_message: str | None
    error_kind: str | None


class DecompositionRow(TypedDict):
    """One ``ExportedProgram.run_decompositions`` call."""

    module_class: str | None
    start_unix_nano: int
    duration_s: float
    outcome: str
    op_count_before: int | None
    op_count_after: int | None
    ops_added: list[str]
    ops_removed: list[str]
    default_table: bool | None
    error_type: str | None
    error_message: str | None


class ExportRunsRow(TypedDict):
    """The recorded runs of the modules exported from one module class."""

    module_class: str | None
    runs: int
    failed: int
    duration_s: float


class ExportFailureRow(TypedDict):
    """One failed export or run_decompositions call."""

    operation: str
    module_class: str | None
    strict: bool | None
    error_type: str | None
    error_message: str | None
    error_kind: str | None
    classified: bool | None
    case: str | None


class ExportSection(TypedDict):
    """A process's ``torch_export``."""

    exports: list[ExportRow]
    decompositions: list[DecompositionRow]
    runs: list[ExportRunsRow]
    failures: list[ExportFailureRow]


class CountTotals(TypedDict):
    """The totals that count things."""

    frame_compiles: int
    graphs: int
    ops: int
    guards: int
    graph_breaks: int
    recompiles: int
    failures: int
    faults: int
    accuracy_failures: int
    runs: int
    unfinished_compiles: int
    cudagraph_skips: int
    cache_hits: int
    cache_misses: int
    cache_bypasses: int
    exports: int
    export_failures: int
    decompositions: int


class TimeTotals(TypedDict):
    """The totals that are seconds."""

    compile_seconds: float
    lazy_backward_seconds: float
    warm_compile_seconds: float
    device_seconds: float
    export_seconds: float


class ProcessTotals(CountTotals, TimeTotals):
    """One process's totals."""


class ExportTotals(TypedDict):
    """The totals of a process's torch.export calls (part of ProcessTotals)."""

    exports: int
    export_failures: int
    decompositions: int
    export_seconds: float


class Totals(ProcessTotals):
    """The totals over all processes."""

    processes: int


COUNT_TOTALS: tuple[str, ...] = tuple(CountTotals.__annotations__)
TIME_TOTALS: tuple[str, ...] = tuple(TimeTotals.__annotations__)
TOTAL_KEYS: tuple[str, ...] = (*COUNT_TOTALS, *TIME_TOTALS)
"""Every per-process total, counts first: the one list the summary, diff and gate use."""


class PhaseRow(TypedDict):
    """Seconds of one phase over all compiles, and its share of the compile time."""

    phase: str
    seconds: float
    share: float | None


class StepRow(TypedDict):
    """Seconds of one named AOT or backend step (a part of its phase)."""

    step: str
    seconds: float
    share: float | None


class CacheSplit(TypedDict):
    """Compile time of frame compiles served from cache against the rest (cold)."""

    warm_compiles: int
    warm_seconds: float
    cold_compiles: int
    cold_seconds: float
    cache_hits: int
    cache_misses: int
    cache_bypasses: int


class FunctionRow(TypedDict):
    """One code location, on one module class: its compiles and recompiles and their
    compile seconds."""

    function: str | None
    module: str | None
    file: str | None
    line: int | None
    compiles: int
    recompiles: int
    compile_seconds: float
    share: float | None
    processes: int


class CompileTime(TypedDict):
    """Where the compile time of a process (or of all of them) went."""

    compile_seconds: float
    frame_seconds: float
    lazy_backward_seconds: float
    phases: list[PhaseRow]
    steps: list[StepRow]
    cache: CacheSplit
    slowest_functions: list[FunctionRow]


class ProcessDescription(TypedDict):
    """Who wrote the telemetry: the label and the resource's facts."""

    process: str
    rank: int | None
    local_rank: int | None
    world_size: int | None
    node_rank: int | None
    run_id: str | None
    host: str | None
    pid: int | None
    service: str | None
    torch_version: str | None
    """The torch that compiled (the resource's ``torch.version``)."""


class ProcessTables(TypedDict):
    """What one process's tables hold: its totals are added up from them."""

    compiles: list[CompileRow]
    graph_breaks: list[GraphBreakGroup]
    recompiles: list[RecompileRow]
    near_recompile_limit: list[LimitRow]
    what_to_do: list[CauseRow]
    slowest: list[SlowCompile]
    failures: list[Failure]
    faults: list[Fault]
    accuracy: list[AccuracyCheck]
    runs: dict[str, int]
    device_time: list[DeviceTime]
    cudagraphs: Cudagraphs
    caches: Caches
    unfinished: list[Unfinished]
    torch_export: ExportSection


class ProcessSection(ProcessDescription, ProcessTables):
    """Everything the report knows about one process (rank)."""

    totals: ProcessTotals
    compile_time: CompileTime


class FileRow(TypedDict):
    """One file read and what it held."""

    path: str
    lines: int
    spans: int
    log_records: int
    metric_points: int
    bad_lines: int


class ProblemRow(TypedDict):
    """Something in the input that could not be read."""

    path: str
    line: int | None
    message: str


class Inputs(TypedDict):
    """The files read and the problems met."""

    files: list[FileRow]
    problems: list[ProblemRow]


class CompileFacts(TypedDict):
    """The facts of one compile that ranks compare."""

    graphs: int
    guards: int | None


class FirstDifference(TypedDict):
    """The first compile where a rank is not like most ranks."""

    compile_id: str | None
    actual: CompileFacts | None
    expected: CompileFacts | None


class RankReference(TypedDict):
    """The majority's totals (null where ranks split evenly)."""

    graphs: int | None
    recompiles: int | None
    guards: int | None


class RankRow(TypedDict):
    """One rank against the others."""

    process: str
    rank: int | None
    frame_compiles: int
    graphs: int
    recompiles: int
    guards: int
    graph_breaks: int
    failures: int
    compile_seconds: float
    diverges: list[str]
    first_difference: FirstDifference | None


class Ranks(TypedDict):
    """The comparison across ranks."""

    compared: bool
    diverged: bool
    reference: RankReference | None
    rows: list[RankRow]


class Source(TypedDict):
    """Where the run was read from, when not from files: a Jaeger query address."""

    kind: str
    address: str
    service: str
    window: list[str]
    run_id: str | None
    traces: int
    spans: int
    queries: int
    truncated_slices: list[list[str]]
    complete: list[str]
    may_be_sampled: list[str]
    absent: list[str]


class Summary(TypedDict):
    """The report summary (``otel-dynamo report --json``)."""

    schema_version: int
    recompile_limit: int
    inputs: Inputs
    source: Source | None
    totals: Totals
    compile_time: CompileTime
    processes: list[ProcessSection]
    ranks: Ranks
