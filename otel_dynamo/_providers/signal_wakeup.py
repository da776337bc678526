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
import functools
import logging
import math
import os
import platform
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Collection
from typing import Any

from otel_dynamo._providers import signal_sentinel

_log = logging.getLogger(__name__)
Woken = Callable[[int], None]
"""Called on the watcher thread with the number of each signal caught."""
DEATH_WAIT_S = 1.0
"""After re-raising a signal at its default action, how long before ``os._exit``."""
SENTINEL_EXIT_WAIT_S = 1.0
"""After its channel closes, how long the sentinel has to exit before it is left."""
MAX_GRANTED_S = 255
"""The most seconds an acknowledgement can grant (one byte)."""
SA_RESETHAND = 0x80000000
"""Linux's flag (x86-64, AArch64): the disposition resets to the default on delivery."""
SIGSET_BYTES = 128
"""glibc's and musl's ``sigset_t``: 1024 bits."""
SIGACTION_MACHINES = frozenset({"x86_64", "aarch64"})


class Watcher:
    """Owns the wakeup channel, the thread that reads it and, where it can run, the
    signal sentinel (``signal_sentinel``) at the channel's other end.

    With the sentinel, the wakeup fd is one end of a ``SOCK_SEQPACKET`` socket pair: the
    C-level handler's bytes go to the sentinel, which relays each back here; the thread
    acknowledges it (Python runs: the flush is under way) before acting. Without it (no
    Linux, no interpreter to start, ``ends_by_sentinel=False``), a plain pipe: the thread
    reads the handler's bytes itself, as long as it can get the GIL.
    """

    def __init__(
        self,
        woken: Woken,
        *,
        granted_s: Callable[[], float] = lambda: 0.0,
        sentinel_signals: Collection[int] = (),
    ) -> None:
        self._woken = woken
        self._granted_s = granted_s
        self._sentinel_signals = tuple(sentinel_signals)
        self._sentinel: subprocess.Popen[bytes] | None = None
        self._channel: socket.socket | None = None
        self._read_fd, self._write_fd = -1, -1

    @property
    def sentinel_running(self) -> bool:
        return self._sentinel is not None and self._sentinel.poll() is None

    def start(self) -> bool:
        """Take the wakeup fd (main thread only) and start reading; False, and nothing
        changed, when someone else holds it or it cannot be set."""
        self._open()
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

    def _open(self) -> None:
        """The sentinel's socket pair where a sentinel starts, else a pipe."""
        if self._sentinel_signals and sys.platform == "linux" and _sentinel_program():
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                self._sentinel = _start_sentinel(theirs.fileno(), self._sentinel_signals)
            except Exception:  # no interpreter to start, no process left: a pipe, then
                _log.debug("otel_dynamo: could not start the signal sentinel", exc_info=True)
                ours.close()
            else:
                ours.setblocking(False)  # set_wakeup_fd requires it
                self._channel = ours
                self._read_fd = self._write_fd = ours.fileno()
                return
            finally:
                theirs.close()
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._write_fd, False)  # set_wakeup_fd requires it

    def stop(self) -> None:
        """Give the wakeup fd back (unless someone took it since) and end the thread and
        the sentinel."""
        with contextlib.suppress(ValueError, OSError):
            current = signal.set_wakeup_fd(-1)
            if current not in (-1, self._write_fd):
                signal.set_wakeup_fd(current)
        if self._channel is not None:
            with contextlib.suppress(OSError):
                self._channel.shutdown(socket.SHUT_RDWR)  # wakes the thread; the sentinel exits
        self._close()
        if self._sentinel is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._sentinel.wait(SENTINEL_EXIT_WAIT_S)  # reaped, not left a zombie
            self._sentinel = None

    def forget_in_child(self) -> None:
        """In a forked child: never write to the parent's channel or shut it down (the
        pair is shared with the parent); the thread and the sentinel are the parent's."""
        with contextlib.suppress(ValueError, OSError):
            signal.set_wakeup_fd(-1)
        self._sentinel = None
        self._close()

    def _read(self) -> None:
        readable = select.poll()  # not select(): a rank's fds can number above 1024
        readable.register(self._read_fd, select.POLLIN)
        while True:
            try:
                readable.poll()
                data = os.read(self._read_fd, 512)
            except BlockingIOError:
                continue
            except (OSError, ValueError):
                return  # closed by stop()
            if not data:
                return
            if self._channel is not None:
                self._acknowledge()
            for signum in dict.fromkeys(data):  # once per signal number, in order
                try:
                    self._woken(signum)
                except Exception:  # the watcher must keep watching
                    _log.debug("otel_dynamo: signal watcher callback failed", exc_info=True)

    def _acknowledge(self) -> None:
        """Tell the sentinel Python runs, and how long the flush and exit may take."""
        seconds = min(MAX_GRANTED_S, math.ceil(self._granted_s()))
        with contextlib.suppress(OSError):
            os.write(self._write_fd, bytes([signal_sentinel.ACK, seconds]))

    def _close(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        else:
            for fd in {self._write_fd, self._read_fd} - {-1}:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._read_fd, self._write_fd = -1, -1


def _sentinel_program() -> bool:
    """Whether the sentinel's program is a file an interpreter can run (not in a zip)."""
    return os.path.isfile(signal_sentinel.__file__)


def _start_sentinel(fd: int, signums: Collection[int]) -> subprocess.Popen[bytes]:
    """The sentinel process, holding ``fd`` (its end of the pair) and nothing else."""
    command = [
        sys.executable,
        "-I",  # no PYTHON* variables, no user site, no script directory
        "-S",  # no site: starts in milliseconds, loads nothing of the job's
        signal_sentinel.__file__,
        str(os.getpid()),
        str(fd),
        str(signal_sentinel.ACK_WAIT_S),
        *(str(int(signum)) for signum in signums),
    ]
    return subprocess.Popen(
        command,
        pass_fds=(fd,),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def reset_on_delivery(signum: int) -> bool:
    """Make the handler now set for ``signum`` reset to the default action as it is
    delivered (``SA_RESETHAND``), so a second ``signum`` from the sentinel ends the process
    as it would end a plain one. Linux on x86-64 and AArch64 only (where ``struct
    sigaction`` is known); False, and nothing changed, elsewhere or on any failure."""
    if sys.platform != "linux" or platform.machine() not in SIGACTION_MACHINES:
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        action = _new_sigaction()
        if libc.sigaction(signum, None, ctypes.byref(action)) != 0:
            return False
        action.flags |= SA_RESETHAND
        if libc.sigaction(signum, ctypes.byref(action), None) != 0:
            return False
        check = _new_sigaction()
        libc.sigaction(signum, None, ctypes.byref(check))
        return bool(check.flags & SA_RESETHAND) and check.handler == action.handler
    except Exception:
        _log.debug("otel_dynamo: could not set SA_RESETHAND", exc_info=True)
        return False


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
