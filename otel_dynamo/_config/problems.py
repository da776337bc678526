"""Each configuration problem is warned about once per process."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

from otel_dynamo._config.settings import ConfigProblem

_log = logging.getLogger(__name__)
_warned: set[str] = set()
_lock = threading.Lock()


def warn_problems(problems: Iterable[ConfigProblem]) -> None:
    """Log each problem's message as a warning on ``otel_dynamo``, once per process."""
    for problem in problems:
        with _lock:
            first = problem.message not in _warned
            _warned.add(problem.message)
        if first:
            _log.warning(problem.message)
