"""Results of pure functions of one string, kept: a run's ranks repeat the same compile
ids and recompile reasons, each worked out once per reading process."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

_Result = TypeVar("_Result")


def remembered(
    *, max_length: int, size: int
) -> Callable[[Callable[[str], _Result]], Callable[[str], _Result]]:
    """Keep the results (the ``size`` most recent) of a pure function of one string, for
    strings up to ``max_length`` long; longer ones are worked out each time, so that
    hostile input never holds memory here."""

    def wrap(function: Callable[[str], _Result]) -> Callable[[str], _Result]:
        cached = functools.lru_cache(maxsize=size)(function)

        @functools.wraps(function)
        def call(text: str) -> _Result:
            return cached(text) if len(text) <= max_length else function(text)

        return call

    return wrap
