"""A fix for each cause of a recompile or a graph break, derived from what torch said.

A cause is one (code location, kind, subject): the failed guard's kind and source at the
compiled function (``guards.read_guards``), or the break's reason at the user code it
broke in. Its fix says in one sentence, with the user's own names, what to do, and
carries the actions a program applies (``records.Action``). A fix never changes what the
job computes or prints: what only hides a cause (a higher recompile limit, a log call
dropped) is not offered as one, or offered as what it is, ``expect`` saying the
recompiles remain. The fixes here were each applied to real one-cause jobs on torch 2.8
and 2.15 (tests/fixes/); the torch version decides where torch's means differ.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Sequence

from otel_dynamo.causes import guards
from otel_dynamo.causes.records import (
    Action,
    CompileKwargsAction,
    ConfigValue,
    Expect,
    Fix,
    FixSource,
    MarkDynamicAction,
    Verdict,
)
from otel_dynamo.causes.resumed import Resumed, resumed

ENV_DYNAMIC_SOURCES = "TORCH_COMPILE_DYNAMIC_SOURCES"
"""torch's own variable (``torch.compiler.config.dynamic_sources``): the sources it names
are dynamic from their first compile."""
DYNAMO_CONFIG = "torch._dynamo.config"
HIDING_CONFIGS = frozenset(
    {
        "ignore_logging_functions",  # removes a logger's break by dropping the log line
        "recompile_limit",
        "cache_size_limit",
        "accumulated_recompile_limit",
        "accumulated_cache_size_limit",
        "suppress_errors",
    }
)
"""Configs that hide a cause instead of removing it: never an action of a fix."""


@dataclasses.dataclass(frozen=True)
class Code:
    """Where a cause is, as recorded: the compiled function (or the user function a
    break happened in), its parameters in order (empty: not recorded), the torch that
    ran."""

    function: str | None
    file: str | None
    line: int | None
    arguments: tuple[str, ...] = ()
    torch_version: str | None = None
    shown: str | None = None
    """The function's name as the report shows it (``Block.forward``), where it differs
    from its code name."""

    @property
    def where(self) -> str:
        """``f (job.py:3)``: the function and its file's name and line."""
        return function_at(
            self.shown or self.function or "the compiled function", self.file, self.line
        )


def function_at(name: str, file: str | None, line: int | None) -> str:
    """``Block.forward (job.py:3)``: a function as the fixes name it, with its file's name
    and line."""
    if not file:
        return name
    place = file.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name} ({place}:{line})" if line is not None else f"{name} ({place})"


def recompile_fixes(
    failure: guards.GuardFailure,
    code: Code,
    *,
    recompiles: int,
    dimensions: Sequence[int] = (),
) -> list[Fix]:
    """The fixes of one recompile cause: a failed guard of ``failure``'s kind on its
    source, ``recompiles`` times at ``code``; ``dimensions``: every dimension its size
    guards failed on (a batch, then a sequence length), all of which a fix must free."""
    fixes = _recompile_fixes(failure, code, recompiles, dimensions)
    if failure.torch_hint:
        for fix in fixes:
            fix["source"]["torch_hint"] = fix["source"]["torch_hint"] or failure.torch_hint
    return fixes


def _recompile_fixes(
    failure: guards.GuardFailure, code: Code, recompiles: int, dimensions: Sequence[int]
) -> list[Fix]:
    after_break = resumed(code.function)
    if after_break is not None:  # no user can mark or compile a function torch made
        return [_resumed_fix(code, after_break)]
    subject = _Subject.of(failure.source)
    kind = failure.kind
    if kind in (guards.KIND_SIZE, guards.KIND_STRIDE) and subject is not None:
        return [_shape_fix(failure, subject, code, dimensions)]
    if kind == guards.KIND_INT and subject is not None:
        return [_int_fix(subject, code)]
    if kind == guards.KIND_FLOAT and subject is not None:
        return [_float_fix(subject, code, recompiles)]
    words = _WORDS.get(kind)
    if words is None:
        return [_words_only(_GUARD_DEFAULT.format(where=code.where), None)]
    sentence, remains = words
    name = subject.shown if subject is not None else "the value"
    expect = recompiles if remains else None
    return [_words_only(sentence.format(name=name, where=code.where), expect)]


def _resumed_fix(code: Code, after_break: Resumed) -> Fix:
    return _words_only(
        f"{code.where} is the rest of {after_break.function} that torch resumes after the "
        f"graph break at line {after_break.line}, and recompiles for what changed there: "
        f"remove that break (see its fix) and this goes, or moves into {after_break.function}",
        None,
    )


_GUARD_DEFAULT = "keep what the failed guard checks the same between calls of {where}"
_WORDS: dict[str, tuple[str, bool]] = {
    guards.KIND_DTYPE: (
        "{where} compiles once per dtype of {name}: expected where both are meant; "
        "otherwise convert {name} to one dtype before the call",
        True,
    ),
    guards.KIND_REQUIRES_GRAD: (
        "{where} compiles once with and once without gradients for {name}: expected "
        "where both are meant (training and evaluation)",
        True,
    ),
    guards.KIND_DEVICE: (
        "{where} compiles once per device of {name}: expected where both are meant; "
        "otherwise move {name} to one device before the call",
        True,
    ),
    guards.KIND_RANK: (
        "{where} compiles once per number of dimensions of {name}: give {name} the same "
        "number of dimensions each call (reshape or unsqueeze before it)",
        False,
    ),
    guards.KIND_BOOL: (
        "{where} compiles once per value of {name}: expected where the value chooses "
        "other code; otherwise make it a tensor argument",
        True,
    ),
    guards.KIND_STR: (
        "{where} compiles once per value of {name}: expected where the value chooses other code",
        True,
    ),
    guards.KIND_LENGTH: (
        "{where} compiles once per length of {name}: pass one tensor (torch.stack the "
        "items) or keep the length the same between calls",
        False,
    ),
    guards.KIND_OBJECT: (
        "{where} is called with a different {name} object each time and torch checks its "
        "identity: make it once and reuse it, or pass the values it holds instead",
        False,
    ),
    guards.KIND_TYPE: (
        "{where} gets {name} of another type than before: pass one type each call",
        False,
    ),
    guards.KIND_NONE: (
        "{where} gets {name} as None in some calls and not in others: expected where "
        "both are meant",
        True,
    ),
    guards.KIND_DICT_KEY: (
        "{where} gets {name} with other keys than before: keep its keys the same",
        False,
    ),
    guards.KIND_ATTRIBUTE_PRESENCE: (
        "{where} sees {name} with an attribute set in some calls only: set it once, "
        "before the first call",
        False,
    ),
    guards.KIND_GLOBAL_STATE: (
        "{where} is called under other global torch state (grad mode, autocast, "
        "deterministic algorithms, threads): call it under one state",
        False,
    ),
    guards.KIND_BACKEND: (
        "{where} is compiled with two backends: compile it with one",
        False,
    ),
}
"""One sentence per kind with no action of its own ({where}, {name}), and whether the
recompiles are expected to remain (the value really needs its own graph)."""


_LOCAL_SOURCE = re.compile(r"L\[(['\"])(?P<name>\w+)\1\](?P<rest>.*)")
_BARE_SOURCE = re.compile(r"(?P<name>\w+)(?P<rest>(?:\.\w+|\[\d+\]|\[(['\"])\w+\3\])*)")
"""A local as Dynamo names it in a tensor check (``L['x']``) or in guard code from torch
2.13 on (``x``, ``self.step``)."""


@dataclasses.dataclass(frozen=True)
class _Subject:
    """A guard's source, read: ``L['x']`` / ``x`` a local, ``G['SCALE']`` a global,
    ``self.step`` / ``L['self'].step`` an attribute of the module it runs on."""

    dynamo: str  # Dynamo's source name, as TORCH_COMPILE_DYNAMIC_SOURCES matches it
    shown: str  # the user's name for it: "input x", "global SCALE", "attribute self.step"
    local: str | None  # the local it is (an argument when the function's parameters say so)
    is_parameter: bool = False

    @classmethod
    def of(cls, source: str | None) -> _Subject | None:
        if not source:
            return None
        raw = source.strip()
        shown = guards.named(raw)
        if match := re.fullmatch(r"G\[(['\"])(?P<name>\w+)\1\]", raw):
            return cls(f"G['{match['name']}']", shown, None)
        match = _LOCAL_SOURCE.fullmatch(raw) or _BARE_SOURCE.fullmatch(raw)
        if match is None:
            return None
        local, rest = match["name"], match["rest"]
        is_parameter = shown.startswith(("parameter ", "buffer "))
        return cls(f"L['{local}']{rest}", shown, local if not rest else None, is_parameter)


def _shape_fix(
    failure: guards.GuardFailure, subject: _Subject, code: Code, dimensions: Sequence[int]
) -> Fix:
    known = [*dimensions, *([] if failure.dimension is None else [failure.dimension])]
    dims = sorted(set(known))
    dim_words = _dimension_words(dims)
    if subject.is_parameter:
        return _fix(
            f"{subject.shown} of {code.where} changes shape between calls: let parameters "
            "be dynamic (torch._dynamo.config.force_parameter_static_shapes = False)",
            [_config("force_parameter_static_shapes", False)],
            expect=0,
            hint="consider using torch._dynamo.config.force_parameter_static_shapes = False",
        )
    position = _position(subject, code)
    if failure.kind == guards.KIND_SIZE and position is not None and dims:
        assert subject.local is not None and code.file and code.function and code.line is not None
        return _fix(
            f"mark {dim_words} of {subject.local} dynamic before each call of {code.where}: "
            f"{_mark_dynamic_call(subject.local, dims)}; one graph then serves every size",
            [
                {
                    "kind": "mark_dynamic",
                    "file": code.file,
                    "line": code.line,
                    "function": code.function,
                    "shown": code.shown or code.function,
                    "argument": subject.local,
                    "position": position,
                    "dims": dims,
                }
            ],
            expect=0,
            differs=(
                f"torch's log suggests {ENV_DYNAMIC_SOURCES}, which marks every local of that "
                "name dynamic in every compiled function; mark_dynamic marks this argument only"
            ),
        )
    if failure.kind == guards.KIND_STRIDE:
        return _words_only(
            f"{subject.shown} of {code.where} comes with other strides (a transposed or "
            f"sliced view): pass it contiguous, {subject.local or subject.shown}.contiguous(), "
            "before the call",
            None,
        )
    return _dynamic_source_fix(
        subject,
        code,
        f"{dim_words} of {subject.shown}",
        changes="change" if dims[1:] else "changes",
    )


def _dimension_words(dims: list[int]) -> str:
    """ "dimension 0", "dimensions 0 and 1", "dimensions 0, 1 and 2"; "its dimensions"."""
    if not dims:
        return "its dimensions"
    if len(dims) == 1:
        return f"dimension {dims[0]}"
    return f"dimensions {', '.join(map(str, dims[:-1]))} and {dims[-1]}"


def _mark_dynamic_call(argument: str, dims: Sequence[int]) -> str:
    """The call as a person writes it: one dimension as an int, several as a list (a
    second int would be mark_dynamic's ``min``)."""
    index = str(dims[0]) if len(dims) == 1 else f"[{', '.join(map(str, dims))}]"
    return f"torch._dynamo.mark_dynamic({argument}, {index})"


def _int_fix(subject: _Subject, code: Code) -> Fix:
    return _dynamic_source_fix(subject, code, subject.shown)


def _dynamic_source_fix(
    subject: _Subject, code: Code, what: str, *, changes: str = "changes"
) -> Fix:
    """The value made dynamic from its first compile by torch's own variable; a module's
    int attribute also needs torch to stop treating those as constants."""
    actions: list[Action] = [{"kind": "env", "name": ENV_DYNAMIC_SOURCES, "value": subject.dynamo}]
    on_module = subject.dynamo.startswith("L['self'].") and not subject.is_parameter
    differs = None
    hint = None
    if on_module:
        actions.insert(0, _config("allow_unspec_int_on_nn_module", True))
        differs = (
            "torch's hint sets allow_unspec_int_on_nn_module alone, which still recompiles "
            f"once; {ENV_DYNAMIC_SOURCES} makes the attribute dynamic from the first compile"
        )
    return _fix(
        f"{what} {changes} between calls of {code.where}: make it dynamic from the first "
        f'compile, {ENV_DYNAMIC_SOURCES}="{subject.dynamo}"'
        + (" with torch._dynamo.config.allow_unspec_int_on_nn_module = True" if on_module else ""),
        actions,
        expect=0,
        hint=hint,
        differs=differs,
    )


def _float_fix(subject: _Subject, code: Code, recompiles: int) -> Fix:
    """An argument or a global float that changes: dynamic from the first compile with
    ``dynamic=True`` (the float becomes a symbol); any other float (an attribute, an
    element of a container) said in words."""
    is_global = subject.dynamo.startswith("G[")
    position = _position(subject, code)
    if (position is None and not is_global) or not (
        code.file and code.function and code.line is not None
    ):
        return _words_only(
            f"{subject.shown} changes between calls of {code.where} and torch compiles it "
            "as a constant: pass it to the compiled function as an argument, or as a "
            "tensor",
            None,
        )
    return _fix(
        f"{subject.shown} changes between calls of {code.where}: compile it with "
        "torch.compile(..., dynamic=True), so floats and sizes are dynamic from the "
        "first compile",
        [
            {
                "kind": "compile_kwargs",
                "file": code.file,
                "line": code.line,
                "function": code.function,
                "shown": code.shown or code.function,
                "kwargs": {"dynamic": True},
            }
        ],
        expect=0,
    )


def _position(subject: _Subject, code: Code) -> int | None:
    """The argument's index among the compiled function's parameters; None where the
    value is no argument of it (or its parameters were not recorded)."""
    if subject.local is None or subject.local not in code.arguments:
        return None
    return code.arguments.index(subject.local)


def limit_fix(code: Code, *, limit: int, recompiles: int) -> Fix:
    """The recompile limit reached: the fixes of the recompiles' own causes remove it;
    raising the limit only hides it, offered as that."""
    return _fix(
        f"{code.where} reached torch's recompile limit ({limit}) and runs uncompiled past "
        "it: remove the causes of its recompiles (above); raising "
        f"{DYNAMO_CONFIG}.recompile_limit only lets it recompile more",
        [],
        expect=recompiles,
        differs=(
            "torch's message names the limit to raise; that hides the recompiles, it does "
            "not remove them"
        ),
    )


_CONFIG_IN_HINT = re.compile(
    r"torch\._dynamo\.config\.(?P<name>\w+)\s*=\s*(?P<value>True|False|\d+)"
)
_LOGGING_FUNCTIONS_HINT = re.compile(r"reorderable_logging_functions")
_PRINT_IN_REASON = re.compile(r"builtin (?:operator )?`?print\b")
"""A break on ``print``: torch 2.8 on say "builtin operator `print`", older ones "builtin
print()"."""
_DATA_DEPENDENT_BRANCH = re.compile(r"data-dependent branching|dynamic control flow", re.IGNORECASE)
_LOGGER = re.compile(r"\bLogger\b")


def break_fixes(reason: str, code: Code, *, hints: tuple[str, ...], url: str | None) -> list[Fix]:
    """The fixes of one graph-break cause: ``reason`` at the user code ``code``, with
    torch's own ``hints`` for it."""
    source_hint = hints[0] if hints else None
    for hint in hints:
        match = _CONFIG_IN_HINT.search(hint)
        if match and match["name"] not in HIDING_CONFIGS:
            value: ConfigValue = _literal(match["value"])
            return [
                _fix(
                    f"let torch capture it: {DYNAMO_CONFIG}.{match['name']} = {match['value']} "
                    f"(the break in {code.where})",
                    [_config(match["name"], value)],
                    expect_breaks=0,
                    hint=hint,
                    url=url,
                )
            ]
    logging_hint = next((hint for hint in hints if _LOGGING_FUNCTIONS_HINT.search(hint)), None)
    if _PRINT_IN_REASON.search(reason):
        return [
            _fix(
                f"let torch run print after the graph instead of breaking it: add print to "
                f"{DYNAMO_CONFIG}.reorderable_logging_functions (the break in {code.where}; "
                "what it prints stays the same)",
                [
                    {
                        "kind": "config_add",
                        "name": f"{DYNAMO_CONFIG}.reorderable_logging_functions",
                        "value": "builtins.print",
                    }
                ],
                expect_breaks=0,
                hint=logging_hint,
                url=url,
            )
        ]
    if _LOGGER.search(reason):
        return [
            _words_only(
                f"move the log call out of {code.where} (log before or after the compiled "
                "call), or log from a function torch does not compile",
                None,
                hint=source_hint,
                url=url,
                differs=(
                    "torch's hint, ignore_logging_functions, removes the break by dropping "
                    "the log line: the job's output changes, so it is not offered"
                ),
            )
        ]
    if _DATA_DEPENDENT_BRANCH.search(reason) or any(
        _DATA_DEPENDENT_BRANCH.search(hint) for hint in hints
    ):
        cond_hint = next((hint for hint in hints if "torch.cond" in hint), source_hint)
        return [
            _words_only(
                f"the branch in {code.where} depends on a tensor's value: express it with "
                "torch.cond, or compute both sides and choose with torch.where",
                None,
                hint=cond_hint,
                url=url,
            )
        ]
    summary = (
        f"the break in {code.where}: {source_hint}"
        if source_hint
        else f"the break in {code.where}: move what torch cannot trace out of the compiled function"
    )
    return [_words_only(summary, None, hint=source_hint, url=url)]


def _literal(value: str) -> ConfigValue:
    if value in ("True", "False"):
        return value == "True"
    return int(value)


def _config(name: str, value: ConfigValue) -> Action:
    return {"kind": "config", "name": f"{DYNAMO_CONFIG}.{name}", "value": value}


def _fix(
    summary: str,
    actions: list[Action],
    *,
    expect: int | None = None,
    expect_breaks: int | None = None,
    hint: str | None = None,
    url: str | None = None,
    differs: str | None = None,
) -> Fix:
    expected: Expect = {"recompiles": expect, "graph_breaks": expect_breaks}
    source: FixSource = {"torch_hint": hint, "url": url}
    return {
        "summary": summary,
        "actions": actions,
        "expect": expected,
        "source": source,
        "differs_from_torch": differs,
        "verdict": None,
    }


def _words_only(
    summary: str,
    remaining_recompiles: int | None,
    *,
    hint: str | None = None,
    url: str | None = None,
    differs: str | None = None,
) -> Fix:
    """A fix with no action (a rewrite said in words)."""
    return _fix(summary, [], expect=remaining_recompiles, hint=hint, url=url, differs=differs)


USER_FRAME = re.compile(r"^(?P<path>.*?):(?P<line>\d+) in (?P<function>.*)$")
"""A user-stack entry as torch writes it: "path:line in function"."""


def stack_code(user_stack: tuple[str, ...] | list[str], torch_version: str | None = None) -> Code:
    """The user code a break happened in: its stack's innermost entry."""
    match = USER_FRAME.match(user_stack[-1]) if user_stack else None
    if match is None:
        return Code(None, None, None, torch_version=torch_version)
    return Code(match["function"], match["path"], int(match["line"]), torch_version=torch_version)


def recompile_summary(reason: str, code: Code) -> str | None:
    """The first fix's summary for each cause of a recompile reason, joined with "; "
    (what a recompile's span and log event carry); None where nothing was read."""
    summaries = [
        fix["summary"]
        for failure in guards.read_guards(reason)
        for fix in recompile_fixes(failure, code, recompiles=1)[:1]
    ]
    return "; ".join(dict.fromkeys(summaries)) or None


def break_summary(
    reason: str,
    user_stack: tuple[str, ...] | list[str],
    *,
    hints: tuple[str, ...],
    url: str | None,
    torch_version: str | None,
) -> str:
    """The first fix's summary of a graph break (what its event carries)."""
    code = stack_code(user_stack, torch_version)
    return break_fixes(reason, code, hints=hints, url=url)[0]["summary"]


def verdict_words(verdict: Verdict) -> str:
    """ "verified on this job: recompiles 3 → 0, output the same" and the like."""
    before, after = verdict["before"], verdict["after"]
    changes = [
        f"{what} {before[key]} → {after[key]}"  # type: ignore[literal-required]
        for key, what in (("recompiles", "recompiles"), ("graph_breaks", "graph breaks"))
        if before[key] or after[key]  # type: ignore[literal-required]
    ]
    output = "output the same" if verdict["output_same"] else "output changed"
    status = {"verified": "verified", "partial": "partly works", "not_working": "does not work"}[
        verdict["status"]
    ]
    text = f"{status} on this job: {', '.join(changes) or 'no change'}, {output}"
    return f"{text} ({verdict['note']})" if verdict["note"] else text


def env_value(current: str | None, value: str, name: str) -> str:
    """A variable's value with an ``env`` action's: torch's list of dynamic sources grows
    by the source (comma-separated); any other variable takes the value."""
    if name == ENV_DYNAMIC_SOURCES and current:
        listed = [item for item in current.split(",") if item]
        return ",".join(dict.fromkeys([*listed, value]))
    return value


def paste_lines(found: list[Fix]) -> list[str]:
    """Fixes as something to paste: config lines, the ``mark_dynamic`` calls (each after
    a comment line saying where), the ``torch.compile`` arguments to add (a comment), one
    environment line; an entry of two lines holds a newline."""
    lines: list[str] = []
    env: dict[str, str] = {}
    for fix in found:
        for action in fix["actions"]:
            if action["kind"] == "config":
                lines.append(f"{action['name']} = {action['value']!r}")
            elif action["kind"] == "config_add":
                lines.append(f"{action['name']}.add({action['value'].removeprefix('builtins.')})")
            elif action["kind"] == "env":
                env[action["name"]] = env_value(
                    env.get(action["name"]), action["value"], action["name"]
                )
            elif action["kind"] == "mark_dynamic":
                lines.append(
                    f"# before each call of {_action_where(action)}:\n"
                    + _mark_dynamic_call(action["argument"], action["dims"])
                )
            elif action["kind"] == "compile_kwargs":
                kwargs = ", ".join(f"{key}={value!r}" for key, value in action["kwargs"].items())
                lines.append(  # a comment: only the user can add it to their own call
                    f"# compile {_action_where(action)} with torch.compile(..., {kwargs})"
                )
    if env:
        lines.append(
            "export " + " ".join(f"{name}={shell_word(value)}" for name, value in env.items())
        )
    return list(dict.fromkeys(lines))


def _action_where(action: MarkDynamicAction | CompileKwargsAction) -> str:
    """Where an action applies, named as its fix names it (``Net.forward (job.py:12)``)."""
    return function_at(action["shown"], action["file"], action["line"])


_PLAIN_WORD = re.compile(r"[\w@%+=:,./-]+")
_SPECIAL_IN_DOUBLE_QUOTES = re.compile(r"[\"$`\\!]")


def shell_word(value: str) -> str:
    """``value`` as one shell word, as a person would write it: bare where it can be,
    else in double quotes (``"L['x']"``), else quoted by ``shlex``."""
    if _PLAIN_WORD.fullmatch(value):
        return value
    if not _SPECIAL_IN_DOUBLE_QUOTES.search(value):
        return f'"{value}"'
    return shlex.quote(value)
