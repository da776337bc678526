"""What a forked child starts anew.

A child made by ``os.fork`` (a DataLoader worker, a ``multiprocessing`` fork) inherits
the parent's memory but none of its threads: background work, its locks and what it
had pending belong to the parent. Objects that own such things register a method here
that resets them in the child; the registration is weak, so it keeps nothing alive.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Callable

_log = logging.getLogger(__name__)
_lock = threading.Lock()
_resets: list[weakref.WeakMethod[Callable[[], None]]] = []


def reset_in_child(method: Callable[[], None]) -> None:
    """Call the bound ``method`` in every child forked from now on (once per fork)."""
    with _lock:
        _resets[:] = [ref for ref in _resets if ref() is not None]
        _resets.append(weakref.WeakMethod(method))


def _reset_all() -> None:
    global _lock
    _lock = threading.Lock()  # the parent may have held it while forking
    for ref in list(_resets):
        method = ref()
        if method is None:
            continue
        try:
            method()
        except Exception:  # a reset that fails must not break the child
            _log.debug("otel_dynamo: a reset after fork failed", exc_info=True)


os.register_at_fork(after_in_child=_reset_all)
