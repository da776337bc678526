"""Results of pure functions of one string (or a tuple of them), kept: a run's ranks
repeat the same compile ids, recompile reasons and sets of phase names, each worked out
once per reading process."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

_Key = TypeVar("_Key", str, tuple[str, ...])
_Result = TypeVar("_Result")


def remembered(
    *, max_length: int, size: int
) -> Callable[[Callable[[_Key], _Result]], Callable[[_Key], _Result]]:
    """Keep the results (the ``size`` most recent) of a pure function of one string, or of
    a tuple of strings, for keys of up to ``max_length`` characters (a tuple's together);
    longer ones are worked out each time, so that hostile input never holds memory here."""

    def wrap(function: Callable[[_Key], _Result]) -> Callable[[_Key], _Result]:
        cached = functools.lru_cache(maxsize=size)(function)

        @functools.wraps(function)
        def call(key: _Key) -> _Result:
            return cached(key) if _characters(key) <= max_length else function(key)

        return call

    return wrap


def _characters(key: str | tuple[str, ...]) -> int:
    return len(key) if key.__class__ is str else sum(map(len, key))
