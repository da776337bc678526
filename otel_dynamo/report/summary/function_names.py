"""The names the report gives compiled functions, one per function everywhere: its code
name with the class of the module it ran on (``function_label``), for a frame-table row
and for a stack entry that names only the code (``FunctionNames``); files shortened
alike (``short_path``)."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from otel_dynamo.causes.fixes import USER_FRAME
from otel_dynamo.report.summary.schema import CompileRow, Location

_INSTALLED_UNDER = ("/site-packages/", "/dist-packages/")
"""Where installed packages live: a file below is shown from its top-level package."""


@functools.lru_cache(maxsize=4096)  # a run's rows name the same few files many times
def short_path(path: str) -> str:
    """A file of an installed package from its top-level package on
    (``transformers/utils/generic.py``: which package it is matters more than the
    environment it is installed in); any other path, its last two parts: enough to
    recognise a file, short enough to fit."""
    path = path.replace("\\", "/")
    found = [path.rfind(marker) + len(marker) for marker in _INSTALLED_UNDER if marker in path]
    if found and max(found) < len(path):
        return path[max(found) :]
    parts = path.rsplit("/", 2)
    return "/".join(parts[-2:])


def function_label(function: str | None, module: str | None) -> str:
    """The compiled function as shown: its code name, with the class of the module it ran
    on when there was one (``MLP.forward``; a decorator's wrapper standing for a Hugging
    Face model's forward: ``OPTForCausalLM (wrapper)``); "?" when unknown."""
    if module is None:
        return function or "?"
    cls = module.rsplit(".", 1)[-1]
    if function == "forward":
        return f"{cls}.forward"
    return f"{cls} ({function or '?'})"


class FunctionNames:
    """The names the frame tables give compiled functions (``function_label``:
    ``TinyLM.forward``), for the other places that name them from a stack entry's code
    name alone (graph-break stacks, their causes, the diff), so one function has one name.

    A stack entry ("path:line in forward") is the function of that name in that file whose
    first line is the nearest at or above the entry's line; where that function ran on
    modules of several classes, or on none, the code name stays."""

    def __init__(self, compiles: Iterable[CompileRow]) -> None:
        found: dict[tuple[str, str, int], set[tuple[str, str | None]]] = {}
        self._by_compile_id: dict[str, str] = {}
        for row in compiles:
            named = function_label(row["function"], row["module"])
            if row["compile_id"]:
                self._by_compile_id[row["compile_id"]] = named
            if row["function"] and row["file"] and row["line"] is not None:
                key = (short_path(row["file"]), row["function"], row["line"])
                found.setdefault(key, set()).add((named, row["module"]))
        # per (file, function): each first line, with its one (label, module), or None
        self._starts: dict[tuple[str, str], list[tuple[int, tuple[str, str | None] | None]]] = {}
        for (file, function, line), names in found.items():
            one = next(iter(names)) if len(names) == 1 else None
            self._starts.setdefault((file, function), []).append((line, one))
        for starts in self._starts.values():
            starts.sort(key=lambda start: start[0])

    def _enclosing(
        self, file: str, function: str, line: int | None
    ) -> tuple[str, str | None] | None:
        starts = self._starts.get((short_path(file), function))
        if not starts or line is None:
            return None
        enclosing = [named for first, named in starts if first <= line]
        return enclosing[-1] if enclosing else None

    def label(self, file: str, function: str, line: int | None) -> str:
        """``function`` (of ``file``, at ``line``) as the frame tables name it."""
        named = self._enclosing(file, function, line)
        return function if named is None else named[0]

    def of_location(self, row: Location) -> str:
        """The function of a row that names its code by location alone (the recompile
        limit's, an unfinished compile's), as the frame tables name it; "?" when unknown."""
        if row["function"] is None:
            return "?"
        return self.label(row["file"] or "", row["function"], row["line"])

    def module(self, file: str, function: str, line: int | None) -> str | None:
        """The module class ``function`` (of ``file``, at ``line``) ran on, where its frame
        compiles name one class; else None."""
        named = self._enclosing(file, function, line)
        return None if named is None else named[1]

    def of_compile(self, compile_id: str | None, function: str | None) -> str:
        """The function compile ``compile_id`` compiled (a failure's, a fault's), named as
        its frame-table row names it; else ``function`` as it is ("?" when unknown)."""
        return self._by_compile_id.get(compile_id or "", function or "?")

    def entry(self, entry: str) -> str:
        """A "path:line in function" stack entry with its function so named."""
        match = USER_FRAME.match(entry)
        if match is None:
            return entry
        label = self.label(match["path"], match["function"], int(match["line"]))
        return f"{match['path']}:{match['line']} in {label}"

    def stack(self, user_stack: list[str]) -> list[str]:
        return [self.entry(entry) for entry in user_stack]


NO_FUNCTION_NAMES = FunctionNames(())
"""Code names as they are (nothing known of the compiled functions)."""

_last_names: tuple[list[CompileRow], FunctionNames] | None = None


def names_for(compiles: list[CompileRow]) -> FunctionNames:
    """``FunctionNames(compiles)``, made once while the tables of one process ask for it
    in turn (the terminal's, the page's, the causes'): the last list asked for is held,
    and its rows' names and places are never changed once made."""
    global _last_names
    last = _last_names  # read once: another thread may replace it meanwhile
    if last is not None and last[0] is compiles:
        return last[1]
    made = FunctionNames(compiles)
    _last_names = (compiles, made)
    return made
