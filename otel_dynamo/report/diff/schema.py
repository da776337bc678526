"""The diff's shape: what ``compare`` writes and ``gate``, the terminal, the page and
``--json`` read (every key in docs/diff-json.md).

TypedDicts, so the diff stays plain JSON data while ``mypy --strict`` checks every key.
The ``changes`` of each keyed section (graph breaks, recompiles, failures) are lists of
items of that section's type.
"""

from __future__ import annotations

from typing import TypedDict


class _Significance(TypedDict, total=False):
    significant: bool
    """A time's: whether it moved past ``--min-change`` (counts have none)."""


class Change(_Significance):
    """A number in both runs: base, new, new - base (ints for counts, floats for times),
    and that relative to base (null from 0)."""

    base: int | float
    new: int | float
    change: int | float
    relative: float | None


class MinChangeData(TypedDict):
    """The ``--min-change`` used: relative and absolute (seconds)."""

    relative: float
    seconds: float


class Side(TypedDict):
    """What one run's summary was read from."""

    files: int
    problems: int
    processes: int


class Sides(TypedDict):
    """Both runs' inputs."""

    base: Side
    new: Side


ProcessChange = TypedDict(
    "ProcessChange",
    {"process": str, "in": str, "totals": dict[str, Change]},
)
"""A process matched across the runs (``in``: both, base or new) and its totals compared."""


class Counted(TypedDict):
    """How often an item occurred in each run, and the lines it was seen at."""

    lines: list[int]
    base_count: int
    new_count: int


class BreakItem(Counted):
    """Graph breaks of one reason at one user function."""

    reason: str
    kind: str | None
    file: str
    function: str


class RecompileItem(Counted):
    """Recompiles of one function for one failed guard."""

    function: str
    file: str
    reason: str


class FailureItem(Counted):
    """Failures of one stage, function and error type."""

    stage: str
    function: str
    error_type: str
    error_message: str | None


class BreakChanges(TypedDict):
    """Graph breaks only in NEW, only in BASE, and in both with another count."""

    new: list[BreakItem]
    gone: list[BreakItem]
    changed: list[BreakItem]


class RecompileChanges(TypedDict):
    """Recompiles only in NEW, only in BASE, and in both with another count."""

    new: list[RecompileItem]
    gone: list[RecompileItem]
    changed: list[RecompileItem]


class FailureChanges(TypedDict):
    """Failures only in NEW, only in BASE, and in both with another count."""

    new: list[FailureItem]
    gone: list[FailureItem]
    changed: list[FailureItem]


AnyItem = BreakItem | RecompileItem | FailureItem
"""An item of any keyed section."""

AnyChanges = BreakChanges | RecompileChanges | FailureChanges
"""The changes of any keyed section."""


class FunctionChange(TypedDict):
    """A function whose counts or compile time changed."""

    function: str
    file: str
    frame_compiles: Change
    graphs: Change
    ops: Change
    guards: Change
    compile_seconds: Change
    time_significant: bool
    compiled_with: ComparedSettings


class ComparedSettings(TypedDict):
    """How a function's frames were asked to be compiled in each run (``compiled_with`` of
    its compiles, each way once, in compile order)."""

    base: list[str]
    new: list[str]


class VariantChange(TypedDict):
    """A variant (function, file, failed guard) that became hot or cold."""

    function: str
    file: str
    reason: str | None
    base_calls: int
    new_calls: int
    base_share: float
    new_share: float


class VariantChanges(TypedDict):
    """Variants that became hot or cold; not compared when a run recorded no calls."""

    compared: bool
    became_hot: list[VariantChange]
    became_cold: list[VariantChange]


class Verdict(TypedDict):
    """One ``--fail-on`` condition: what it compared, the value, whether it failed."""

    condition: str
    compared: str
    value: float | None
    failed: bool


class _Conditions(TypedDict, total=False):
    conditions: list[Verdict]
    """The ``--fail-on`` verdicts, added by the command."""


class Diff(_Conditions):
    """What changed between two runs (``otel-dynamo diff --json``)."""

    schema_version: int
    min_change: MinChangeData
    inputs: Sides
    totals: dict[str, Change]
    processes: list[ProcessChange]
    graph_breaks: BreakChanges
    recompiles: RecompileChanges
    failures: FailureChanges
    functions: list[FunctionChange]
    phases: dict[str, Change]
    variants: VariantChanges
