"""A thread woken by Python's C-level signal handler, for a main thread stuck in C code.

A Python signal handler runs only when the main thread is back in the interpreter. A rank
blocked in a collective (NCCL, gloo) or in any long call that releases the GIL never gets
there, so a handler of ours alone would keep SIGTERM from ending it until the SIGKILL that
follows. ``signal.set_wakeup_fd`` makes the C-level handler write each caught signal's
number to a channel at once, whatever the main thread is doing; a daemon thread reading
it can then act for it.

Where a main thread holds the GIL in C code, no thread of ours can run at all; on Linux
(x86-64, AArch64) the channel's other end is then held by the termination sentinel
(``termination_sentinel``), a process that relays each signal to the thread and ends the job
when the thread cannot answer. Should the sentinel not start or die, the thread reads the
channel's other end itself, as with a pipe. Elsewhere, and in forked children (whose
parent's sentinel is not theirs, and which would each start one), it is a pipe.

The wakeup fd is one per process: where someone already holds it (an asyncio loop in the
main thread), it is left to them and nothing here runs. Whoever sets it later takes it
over; the main-thread handler still works then. A forked child gets a channel of its
own, so its signals never wake its parent.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Collection

from otel_dynamo._lifecycle import dispositions, termination_sentinel

_log = logging.getLogger(__name__)
Woken = Callable[[int], None]
"""Called on the watcher thread with the number of each signal caught."""
Acknowledge = Callable[[int], float]
"""Called on the watcher thread as the sentinel relays a signal: seconds the flush and
exit may take (``termination_sentinel.NOT_OURS``: the handler is the job's own)."""
SentinelChanged = Callable[[bool], None]
"""Called on the watcher thread: True once the sentinel runs, False once it is gone."""
DEATH_WAIT_S = 1.0
"""After re-raising a signal at its default action, how long before ``os._exit``."""
SENTINEL_EXIT_WAIT_S = 1.0
"""After its channel closes, how long the sentinel has to exit before it is left."""
THREAD_EXIT_WAIT_S = 1.0
"""How long ``stop()`` waits for the reading thread to leave."""
MAX_GRANTED_S = 255
"""The most seconds an acknowledgement can grant (one byte)."""
READ_BYTES = 512


def _nothing(_value: object) -> None:
    return None


class Watcher:
    """Owns the wakeup channel, the thread that reads it and, where one can run, the
    termination sentinel at the channel's other end."""

    def __init__(
        self,
        woken: Woken,
        *,
        acknowledge: Acknowledge | None = None,
        sentinel_changed: SentinelChanged = _nothing,
        sentinel_signals: Collection[int] = (),
    ) -> None:
        self._woken = woken
        self._acknowledge_with = acknowledge
        self._sentinel_changed = sentinel_changed
        self._sentinel_signals = tuple(int(signum) for signum in sentinel_signals)
        self._sentinel: subprocess.Popen[bytes] | None = None
        self._sentinel_fd = -1  # a pidfd: readable once the sentinel has exited
        self._channel: socket.socket | None = None
        self._spare: socket.socket | None = None  # the sentinel's end, read if it dies
        self._read_fd, self._write_fd = -1, -1
        self._thread: threading.Thread | None = None

    @property
    def sentinel(self) -> subprocess.Popen[bytes] | None:
        """The sentinel process, while this watcher has one."""
        return self._sentinel

    def start(self) -> bool:
        """Take the wakeup fd (main thread only) and start reading; False, and nothing
        changed, when someone else holds it or it cannot be set."""
        try:
            previous = signal.set_wakeup_fd(-1)
            signal.set_wakeup_fd(previous)
        except (ValueError, OSError):
            return False
        if previous != -1:
            return False  # theirs (asyncio's): left alone
        self._open()
        try:
            signal.set_wakeup_fd(self._write_fd, warn_on_full_buffer=False)
        except (ValueError, OSError):
            self._close()
            return False
        self._thread = threading.Thread(
            target=self._read, name="otel_dynamo-termination-watch", daemon=True
        )
        self._thread.start()
        return True

    def _open(self) -> None:
        """The sentinel's socket pair where a sentinel starts, else a pipe."""
        if self._sentinel_signals and _sentinel_can_run():
            try:
                self._open_with_sentinel()
                return
            except Exception:  # no pair, no interpreter, no process left: a pipe, then
                _log.debug("otel_dynamo: could not start the termination sentinel", exc_info=True)
                self._close()
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._write_fd, False)  # set_wakeup_fd requires it

    def _open_with_sentinel(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._channel, self._spare = ours, theirs
        ours.setblocking(False)  # set_wakeup_fd requires it
        self._read_fd = self._write_fd = ours.fileno()
        self._sentinel = _start_sentinel(theirs.fileno(), self._sentinel_signals)
        self._sentinel_fd = os.pidfd_open(self._sentinel.pid)

    def stop(self) -> None:
        """Give the wakeup fd back (unless someone took it since), end the thread and the
        sentinel."""
        with contextlib.suppress(ValueError, OSError):
            current = signal.set_wakeup_fd(-1)
            if current not in (-1, self._write_fd):
                signal.set_wakeup_fd(current)
        if self._channel is not None:
            with contextlib.suppress(OSError):
                self._channel.shutdown(socket.SHUT_RDWR)  # wakes the thread; the sentinel exits
        else:
            with contextlib.suppress(OSError):
                os.close(self._write_fd)  # the pipe's reader sees its end
                self._write_fd = -1
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(THREAD_EXIT_WAIT_S)
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
        if self._sentinel_fd != -1:
            readable.register(self._sentinel_fd, select.POLLIN)
        reading = self._read_fd
        while True:
            try:
                ready = {fd for fd, _event in readable.poll()}
                if self._sentinel_fd in ready:
                    reading = self._lose_sentinel(readable)
                    continue
                data = os.read(reading, READ_BYTES)
            except (BlockingIOError, InterruptedError):
                continue
            except (OSError, ValueError):
                return  # closed by stop()
            if not data:
                return
            if self._sentinel is not None and reading == self._read_fd:
                if data == termination_sentinel.READY:
                    self._sentinel_changed(True)
                    continue
                self._acknowledge(data)
            self._call_woken(data)

    def _lose_sentinel(self, readable: select.poll) -> int:
        """The sentinel exited while the job runs: read its end of the pair ourselves,
        as a pipe, and say so once. Returns the fd to read from now on."""
        readable.unregister(self._sentinel_fd)
        if self._sentinel is not None:
            self._sentinel.poll()  # reaped
        _log.debug("otel_dynamo: the termination sentinel exited; watching without it")
        self._sentinel_changed(False)
        spare = self._spare
        if spare is None:
            return self._read_fd
        readable.unregister(self._read_fd)
        readable.register(spare.fileno(), select.POLLIN)
        spare.setblocking(False)
        return spare.fileno()

    def _acknowledge(self, data: bytes) -> None:
        """Tell the sentinel Python runs, and how long each relayed signal may take."""
        if self._acknowledge_with is None:
            return
        for signum in dict.fromkeys(data):
            try:
                seconds = min(MAX_GRANTED_S, math.ceil(self._acknowledge_with(signum)))
                os.write(self._write_fd, bytes([termination_sentinel.ACK, signum, seconds]))
            except Exception:  # the sentinel then acts as if the GIL were held
                _log.debug("otel_dynamo: could not acknowledge a signal", exc_info=True)

    def _call_woken(self, data: bytes) -> None:
        for signum in dict.fromkeys(data):  # once per signal number, in order
            try:
                self._woken(signum)
            except Exception:  # the watcher must keep watching
                _log.debug("otel_dynamo: signal watcher callback failed", exc_info=True)

    def _close(self) -> None:
        for held in (self._channel, self._spare):
            if held is not None:
                held.close()
        if self._channel is None:
            for fd in {self._write_fd, self._read_fd} - {-1}:
                with contextlib.suppress(OSError):
                    os.close(fd)
        if self._sentinel_fd != -1:
            with contextlib.suppress(OSError):
                os.close(self._sentinel_fd)
        self._channel = self._spare = None
        self._read_fd, self._write_fd, self._sentinel_fd = -1, -1, -1


def _sentinel_can_run() -> bool:
    """Linux with a known ``struct sigaction``, pidfds, and the sentinel's program as a
    file an interpreter can run (not inside a zip)."""
    return (
        dispositions.supported()
        and hasattr(os, "pidfd_open")
        and os.path.isfile(termination_sentinel.__file__)
    )


def _start_sentinel(fd: int, signums: Collection[int]) -> subprocess.Popen[bytes]:
    """The sentinel process, holding ``fd`` (its end of the pair) and nothing else, in a
    session of its own (signals to the job's process group never reach it)."""
    command = [
        sys.executable,
        "-I",  # no PYTHON* variables, no user site, no script directory
        "-S",  # no site: starts in milliseconds, loads nothing of the job's
        termination_sentinel.__file__,
        str(os.getpid()),
        str(fd),
        str(termination_sentinel.ACK_WAIT_S),
        *(str(signum) for signum in signums),
    ]
    return subprocess.Popen(
        command,
        pass_fds=(fd,),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd="/",
        start_new_session=True,
    )


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
