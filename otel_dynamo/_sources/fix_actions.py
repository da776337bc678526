"""Apply fix actions inside a job that ``otel-dynamo run --try-fixes`` re-runs, without
any change to the job's code: from the start-up hook, right after torch is imported.

The actions are the ones ``--try-fixes`` derived from the run it had just made and put
in OTEL_DYNAMO_FIX_ACTIONS (JSON); the job never reads them from a telemetry file. Each
action kind does what docs/report-json.md says a program applying it does:

* ``config``: set the named torch config (``torch._dynamo.config.NAME``);
* ``config_add``: add the callable at a dotted path to the named config set; the path is
  resolved through ``builtins`` and modules already imported, never by importing one;
* ``mark_dynamic`` and ``compile_kwargs``: ``torch.compile`` is wrapped so that the
  compile of the function defined at that file and line gets the keyword arguments,
  and each call of it marks the argument's dimensions dynamic before Dynamo sees it;
* ``env`` is set by ``--try-fixes`` in the job's environment; ``code_edit`` is never
  applied here (it changes the user's code).
"""

from __future__ import annotations

import builtins
import functools
import importlib
import sys
from collections.abc import Callable
from types import CodeType, ModuleType
from typing import Any

from otel_dynamo.causes.records import (
    ACTION_COMPILE_KWARGS,
    ACTION_CONFIG,
    ACTION_CONFIG_ADD,
    ACTION_MARK_DYNAMIC,
    CONFIG_MODULES,
    Action,
    CompileKwargsAction,
    MarkDynamicAction,
)


class ActionError(ValueError):
    """An action that cannot be applied as written (the re-run reports it and fails)."""


def apply_actions(actions: list[Action], torch: ModuleType) -> None:
    """Apply every config, config_add, mark_dynamic and compile_kwargs action now (torch
    has just been imported)."""
    wrapped: list[MarkDynamicAction | CompileKwargsAction] = []
    for action in actions:
        if action["kind"] == ACTION_CONFIG:
            module, name = _config_module(action["name"])
            _require_known(module, name, action["name"])
            setattr(module, name, action["value"])
        elif action["kind"] == ACTION_CONFIG_ADD:
            module, name = _config_module(action["name"])
            _require_known(module, name, action["name"])
            getattr(module, name).add(_resolve(action["value"]))
        elif action["kind"] in (ACTION_MARK_DYNAMIC, ACTION_COMPILE_KWARGS):
            wrapped.append(action)
    if wrapped:
        torch.compile = _compile_wrapper(torch.compile, wrapped, torch)  # type: ignore[attr-defined]


def _config_module(dotted: str) -> tuple[ModuleType, str]:
    module_name, _, name = dotted.rpartition(".")
    if module_name not in CONFIG_MODULES:
        raise ActionError(
            f"{dotted!r} is not in a torch config module ({', '.join(CONFIG_MODULES)})"
        )
    return importlib.import_module(module_name), name


def _require_known(module: ModuleType, name: str, dotted: str) -> None:
    if not hasattr(module, name):
        raise ActionError(f"this torch has no config {dotted}")


def _resolve(dotted: str) -> Any:
    """The object at ``dotted`` (``builtins.print``, ``logging.Logger.info``), from a
    module already imported; nothing is imported for it."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is None:
            continue
        value: Any = module
        try:
            for part in parts[cut:]:
                value = getattr(value, part)
        except AttributeError:
            continue
        return value
    if len(parts) == 1 and hasattr(builtins, dotted):
        return getattr(builtins, dotted)
    raise ActionError(f"{dotted!r} is not found in an imported module")


def _compile_wrapper(
    original: Callable[..., Any],
    actions: list[MarkDynamicAction | CompileKwargsAction],
    torch: ModuleType,
) -> Callable[..., Any]:
    @functools.wraps(original)
    def compile(model: Any = None, **kwargs: Any) -> Any:
        if model is None:  # @torch.compile(...) with options: the decorator comes back here
            return functools.partial(compile, **kwargs)
        mine = [action for action in actions if _defines(model, action)]
        for action in mine:
            if action["kind"] == ACTION_COMPILE_KWARGS:
                kwargs.update(action["kwargs"])
        compiled = original(model, **kwargs)
        marks = [action for action in mine if action["kind"] == ACTION_MARK_DYNAMIC]
        return _marking(compiled, model, marks, torch) if marks else compiled

    return compile


def _defines(model: Any, action: MarkDynamicAction | CompileKwargsAction) -> bool:
    """Whether the code Dynamo compiles first for ``model`` is the action's function."""
    code = _entry_code(model)
    return code is not None and (code.co_filename, code.co_firstlineno, code.co_name) == (
        action["file"],
        action["line"],
        action["function"],
    )


def _entry_code(model: Any) -> CodeType | None:
    target = getattr(type(model), "forward", None) if _is_module(model) else model
    target = getattr(target, "__func__", target)
    return getattr(target, "__code__", None)


def _is_module(model: Any) -> bool:
    return any(
        base.__name__ == "Module" and base.__module__ == "torch.nn.modules.module"
        for base in type(model).__mro__
    )


def _marking(compiled: Any, model: Any, marks: list[MarkDynamicAction], torch: ModuleType) -> Any:
    """``compiled``, marking each action's argument dynamic before each call: a module's
    through a forward pre-hook on the compiled module (outside the compiled region; its
    arguments come without ``self``), a function's through a wrapper."""
    mark_dynamic = torch._dynamo.mark_dynamic
    shift = 1 if _is_module(model) else 0

    def mark(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        for action in marks:
            position = action["position"] - shift
            value = args[position] if 0 <= position < len(args) else kwargs.get(action["argument"])
            if isinstance(value, torch.Tensor):
                mark_dynamic(value, action["dims"])

    if shift:
        compiled.register_forward_pre_hook(
            lambda _module, args, kwargs: mark(args, kwargs), with_kwargs=True
        )
        return compiled

    @functools.wraps(compiled)
    def call(*args: Any, **kwargs: Any) -> Any:
        mark(args, kwargs)
        return compiled(*args, **kwargs)

    return call
