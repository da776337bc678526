"""A fix record's shape (documented in docs/report-json.md): what ``--json`` carries for
each cause of a recompile or a graph break, and what ``otel-dynamo run --try-fixes``
applies. The action kinds are a contract: a program applies them without reading prose."""

from __future__ import annotations

from typing import Final, Literal, TypedDict

ConfigValue = bool | int | float | str

ACTION_CONFIG: Final = "config"
ACTION_CONFIG_ADD: Final = "config_add"
ACTION_ENV: Final = "env"
ACTION_MARK_DYNAMIC: Final = "mark_dynamic"
ACTION_COMPILE_KWARGS: Final = "compile_kwargs"
ACTION_CODE_EDIT: Final = "code_edit"
CONFIG_MODULES = ("torch._dynamo.config", "torch._inductor.config", "torch.compiler.config")
"""The torch config modules a ``config`` or ``config_add`` action may name."""


class ConfigAction(TypedDict):
    """Set ``name`` (``torch._dynamo.config.NAME``, or of another of CONFIG_MODULES)."""

    kind: Literal["config"]
    name: str
    value: ConfigValue


class ConfigAddAction(TypedDict):
    """Add the callable at the dotted path ``value`` (``builtins.print``) to the set
    ``name``."""

    kind: Literal["config_add"]
    name: str
    value: str


class EnvAction(TypedDict):
    """Set the environment variable ``name`` before the job starts."""

    kind: Literal["env"]
    name: str
    value: str


class MarkDynamicAction(TypedDict):
    """``torch._dynamo.mark_dynamic(ARGUMENT, DIMS)`` on the compiled function's argument
    ``argument`` (``position``: its index among the function's parameters, ``self``
    included) before each call of the function defined at ``file``:``line``."""

    kind: Literal["mark_dynamic"]
    file: str
    line: int
    function: str
    shown: str
    """The function as the report names it (``Net.forward``): what the fix's words say."""
    argument: str
    position: int
    dims: list[int]


class CompileKwargsAction(TypedDict):
    """Pass ``kwargs`` to the ``torch.compile`` of the function defined at ``file``:``line``."""

    kind: Literal["compile_kwargs"]
    file: str
    line: int
    function: str
    shown: str
    """The function as the report names it, as in ``MarkDynamicAction``."""
    kwargs: dict[str, ConfigValue]


class CodeEditAction(TypedDict):
    """Replace ``old`` (found once in ``file``, at ``line``) with ``new``."""

    kind: Literal["code_edit"]
    file: str
    line: int
    old: str
    new: str


Action = (
    ConfigAction
    | ConfigAddAction
    | EnvAction
    | MarkDynamicAction
    | CompileKwargsAction
    | CodeEditAction
)


class Expect(TypedDict):
    """What remains at the cause's code location once the fix is applied (null: not
    known before it is tried)."""

    recompiles: int | None
    graph_breaks: int | None


class FixSource(TypedDict):
    """torch's own hint the fix comes from (as the torch that ran worded it), and the page
    torch links for it."""

    torch_hint: str | None
    url: str | None


class Counts(TypedDict):
    """A run's counts at the cause's code location."""

    recompiles: int
    graph_breaks: int
    compile_seconds: float


VerdictStatus = Literal["verified", "partial", "not_working"]
VERIFIED: Final = "verified"
PARTIAL: Final = "partial"
NOT_WORKING: Final = "not_working"


class RunTime(TypedDict):
    """Seconds the job's compiled graphs ran (all of them: a fix changes which graphs
    run), in the first run, the second plain run and the re-run with the fix; None where
    a run recorded no compiled run. The two plain runs show how much it varies."""

    before_s: float | None
    before_again_s: float | None
    after_s: float | None


class Verdict(TypedDict):
    """What ``otel-dynamo run --try-fixes`` found when it applied the fix to the job."""

    status: VerdictStatus
    before: Counts
    after: Counts
    output_same: bool
    run_time: RunTime
    note: str


class Fix(TypedDict):
    """One way to remove a cause: in words (``summary``), as actions, what remains after
    it, where it comes from, how it differs from what torch itself suggests, and the
    verdict of trying it (null until ``--try-fixes`` tried it)."""

    summary: str
    actions: list[Action]
    expect: Expect
    source: FixSource
    differs_from_torch: str | None
    verdict: Verdict | None


class FixesTogether(TypedDict):
    """Every verified fix applied at once (``DIR-try-fixes/all-fixes.json``): what was
    applied and what that re-run found at all their causes' code locations."""

    fixes: list[str]
    """The summaries of the fixes applied together."""
    actions: list[Action]
    verdict: Verdict | None
    """None when the re-run ran past its time limit."""
