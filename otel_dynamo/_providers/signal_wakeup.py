"""A thread woken by Python's C-level signal handler, for a main thread stuck in C code.

A Python signal handler runs only when the main thread is back in the interpreter. A rank
blocked in a collective (NCCL, gloo) or in any long call that releases the GIL never gets
there, so a handler of ours alone would keep SIGTERM from ending it until the SIGKILL that
follows. ``signal.set_wakeup_fd`` makes the C-level handler write each caught signal's
number to a pipe at once, whatever the main thread is doing; a daemon thread reading that
pipe can then act for it.

The wakeup fd is one per process: where someone already holds it (an asyncio loop in the
main thread), it is left to them and nothing here runs. Whoever sets it later takes it
over; the main-thread handler still works then. A forked child gets a pipe of its own, so
its signals never wake its parent.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable

_log = logging.getLogger(__name__)
Woken = Callable[[int], None]
"""Called on the watcher thread with the number of each signal caught."""
DEATH_WAIT_S = 1.0
"""After re-raising a signal at its default action, how long before ``os._exit``."""


class Watcher:
    """Owns the wakeup pipe and the thread that reads it."""

    def __init__(self, woken: Woken) -> None:
        self._woken = woken
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._write_fd, False)  # set_wakeup_fd requires it

    def start(self) -> bool:
        """Take the wakeup fd (main thread only) and start reading; False, and nothing
        changed, when someone else holds it or it cannot be set."""
        try:
            previous = signal.set_wakeup_fd(self._write_fd, warn_on_full_buffer=False)
        except (ValueError, OSError):
            self._close()
            return False
        if previous != -1:
            signal.set_wakeup_fd(previous)  # theirs (asyncio's): left alone
            self._close()
            return False
        threading.Thread(target=self._read, name="otel_dynamo-signal-watch", daemon=True).start()
        return True

    def stop(self) -> None:
        """Give the wakeup fd back (unless someone took it since) and end the thread."""
        with contextlib.suppress(ValueError, OSError):
            current = signal.set_wakeup_fd(-1)
            if current not in (-1, self._write_fd):
                signal.set_wakeup_fd(current)
        self._close()

    def forget_in_child(self) -> None:
        """In a forked child: never write to the parent's pipe; the thread did not survive."""
        self.stop()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._read_fd, 512)
            except OSError:
                return  # closed by stop()
            if not data:
                return
            for signum in dict.fromkeys(data):  # once per signal number, in order
                try:
                    self._woken(signum)
                except Exception:  # the watcher must keep watching
                    _log.debug("otel_dynamo: signal watcher callback failed", exc_info=True)

    def _close(self) -> None:
        for fd in (self._write_fd, self._read_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


def die_by(signum: int) -> None:
    """End the process by ``signum`` at its default action, from any thread.

    ``signal.signal`` works only on the main thread, which is the one stuck; the C library's
    ``signal`` resets the disposition from here. Should that fail, or the signal be blocked
    everywhere, the process still ends, with the status a shell gives that signal.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.signal.argtypes = [ctypes.c_int, ctypes.c_void_p]
        libc.signal.restype = ctypes.c_void_p
        libc.signal(signum, None)  # SIG_DFL is the null handler
        os.kill(os.getpid(), signum)
        time.sleep(DEATH_WAIT_S)
    finally:
        os._exit(128 + signum)
