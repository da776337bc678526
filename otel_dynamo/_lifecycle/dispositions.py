"""Signal dispositions below Python's ``signal`` module, through ``sigaction`` in ctypes
(which works from any thread; ``signal.signal`` only from the main one).

Our SIGTERM and SIGHUP handlers, where the action before them was the default, are made
to reset to the default action as they are delivered (``SA_RESETHAND``): a second
signal from the termination sentinel then ends a process whose main thread holds the GIL
exactly as the first would have ended the plain job. As soon as Python runs again (our
handler, or the watcher thread) the handler is put back (``rearm``), so a duplicate
signal during the flush is caught again rather than ending the flush. Linux on x86-64
and AArch64 only, where ``struct sigaction`` is known (glibc's and musl's layout).
"""

from __future__ import annotations

import functools
import logging
import platform
import sys
import threading
from typing import Any

_log = logging.getLogger(__name__)

SA_RESETHAND = 0x80000000
"""Linux's flag (x86-64, AArch64): the disposition resets to the default on delivery."""
SIGSET_BYTES = 128
"""glibc's and musl's ``sigset_t``: 1024 bits."""
SIGACTION_MACHINES = frozenset({"x86_64", "aarch64"})
"""Machines whose ``struct sigaction`` layout this module knows."""

_lock = threading.Lock()
_armed: dict[int, Any] = {}
"""Per signal, the action we set with ``SA_RESETHAND`` (our handler), to put back."""


def supported() -> bool:
    return sys.platform == "linux" and platform.machine() in SIGACTION_MACHINES


def reset_on_delivery(signum: int) -> bool:
    """Make the handler now set for ``signum`` reset to the default action as it is
    delivered; False, and nothing changed, where unsupported or on any failure."""
    if not supported():
        return False
    try:
        libc = _libc()
        action = _new_sigaction()
        if libc.sigaction(signum, None, _ref(action)) != 0:
            return False
        action.flags |= SA_RESETHAND
        if libc.sigaction(signum, _ref(action), None) != 0:
            return False
        check = _new_sigaction()
        libc.sigaction(signum, None, _ref(check))
        if not check.flags & SA_RESETHAND or check.handler != action.handler:
            return False
    except Exception:
        _log.debug("otel_dynamo: could not set SA_RESETHAND", exc_info=True)
        return False
    with _lock:
        _armed[signum] = action
    return True


def rearm(signum: int) -> None:
    """Put our handler back for ``signum``, still resetting on delivery (a delivery has
    reset it to the default action). The caller knows the handler is still ours."""
    with _lock:  # held while setting: ``forget`` then never races a late re-arm
        action = _armed.get(signum)
        if action is not None:
            _set(signum, action)


def keep_on_delivery(signum: int) -> None:
    """Our handler for ``signum`` stays set across deliveries again (no sentinel to end
    the process: a reset would only let a second signal skip the flush)."""
    with _lock:
        action = _armed.pop(signum, None)
    if action is not None:
        action.flags &= ~SA_RESETHAND
        _set(signum, action)


def forget(signum: int | None = None) -> None:
    """Stop putting our handler back for ``signum`` (every signal: None), changing no
    disposition: it is about to be set another way (the default, to end the process; the
    previous handler)."""
    with _lock:
        if signum is None:
            _armed.clear()
        else:
            _armed.pop(signum, None)


def armed() -> frozenset[int]:
    with _lock:
        return frozenset(_armed)


def _set(signum: int, action: Any) -> None:
    try:
        _libc().sigaction(signum, _ref(action), None)
    except Exception:
        _log.debug("otel_dynamo: could not set a signal's action", exc_info=True)


@functools.cache
def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _ref(action: Any) -> Any:
    import ctypes

    return ctypes.byref(action)


@functools.cache
def _sigaction_type() -> type:
    """Built on first use: ctypes loads only then."""
    import ctypes

    long_words = SIGSET_BYTES // ctypes.sizeof(ctypes.c_ulong)

    class Sigaction(ctypes.Structure):
        """glibc's and musl's ``struct sigaction`` on Linux (x86-64, AArch64)."""

        _fields_ = (
            ("handler", ctypes.c_void_p),
            ("mask", ctypes.c_ulong * long_words),
            ("flags", ctypes.c_int),
            ("restorer", ctypes.c_void_p),
        )

    return Sigaction


def _new_sigaction() -> Any:
    return _sigaction_type()()
