"""The termination sentinel: a small process beside a traced job that ends the job by SIGTERM
or SIGHUP when the job cannot end itself because its main thread holds the GIL in C code.

Run as ``python -I -S termination_sentinel.py PARENT_PID FD ACK_WAIT_S SIGNUM...`` by the
job's termination watch (``termination_watch``); it imports the standard library only.

Why a process: Python's C-level signal handler runs whatever the main thread does, but
everything after it (the Python handler, the watcher thread) needs the GIL. A main thread
stuck in a C call that holds the GIL never lets any of it run, so a job whose SIGTERM has
a Python handler (ours) would outlive a signal that ends the plain job at once. Only
something outside the process can act then.

How: ``FD`` is one end of a ``SOCK_SEQPACKET`` socket pair whose other end is the job's
wakeup fd (``signal.set_wakeup_fd``). The sentinel first sends ``[0]`` (ready: the job
may now make its handlers reset on delivery). The job's C-level handler writes each
caught signal's number to the pair; for the signals ``SIGNUM...`` the sentinel relays it
to the job's watcher thread and waits ``ACK_WAIT_S`` for the watcher's acknowledgement,
``[0, signum, seconds]``: Python runs and the flush and exit take at most ``seconds``
(0: the handler is not ours, the job decides). With no acknowledgement (the GIL is
held), it sends the signal again where the job's action for it is now the default
(``/proc/PID/status``): the handler reset on delivery, so the process ends exactly as a
plain one would, with the same status.
After an acknowledgement it waits the granted time; a job still alive then gets the
signal again, which starts the same round anew (our handler, put back by Python, resets
on that delivery). A signal acknowledged as not ours (the job's own handler) is left to
the job. The sentinel runs in a session of its own with every signal blocked, and exits
when the job's end of the pair closes: when the job exits, however it ends.
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import socket
import sys
import time

ACK = 0
"""First byte of an acknowledgement (job to sentinel) and of the ready record (sentinel to
job); signal numbers start at 1."""
READY = bytes([ACK])
"""The sentinel's first record: it runs."""
NOT_OURS = 0.0
"""Seconds granted for a signal whose handler is the job's own: nothing to guard."""
ACK_WAIT_S = 1.0
"""How long the watcher has to acknowledge a signal before the GIL counts as held."""
RECORD_BYTES = 16
"""Longest record either side sends."""
PENDING_RECORDS = 64
"""Records kept while waiting for an acknowledgement (more are dropped)."""
PROC_STATUS = "/proc/{pid}/status"
"""Where Linux states a process's caught (SigCgt) and ignored (SigIgn) signals."""


class ParentGone(Exception):
    """The job's end of the pair closed: the job has exited."""


def default_action(pid: int, signum: int) -> bool:
    """Whether ``signum`` would end process ``pid`` by its default action now (neither
    caught nor ignored, as ``/proc/PID/status`` says); False when that cannot be read."""
    try:
        with open(PROC_STATUS.format(pid=pid), encoding="ascii") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
        caught = int(fields["SigCgt"].strip(), 16)
        ignored = int(fields["SigIgn"].strip(), 16)
    except (OSError, KeyError, ValueError):
        return False
    bit = 1 << (signum - 1)
    return not (caught | ignored) & bit


def _receive(channel: socket.socket, *, timeout_s: float | None) -> bytes | None:
    """One record, or None when ``timeout_s`` passed; ParentGone at the job's exit."""
    channel.settimeout(timeout_s)
    try:
        record = channel.recv(RECORD_BYTES)
    except TimeoutError:
        return None
    except OSError as error:
        raise ParentGone from error
    if not record:
        raise ParentGone
    return record


class Sentinel:
    """The sentinel's state: the job, its end of the pair, records not yet looked at."""

    def __init__(
        self, pid: int, channel: socket.socket, *, ack_wait_s: float, signums: frozenset[int]
    ) -> None:
        self.pid = pid
        self.channel = channel
        self.ack_wait_s = ack_wait_s
        self.signums = signums
        self.pending: collections.deque[bytes] = collections.deque(maxlen=PENDING_RECORDS)
        self.pidfd = _pidfd(pid)

    def watch(self) -> None:
        """Relay and guard until the job exits."""
        try:
            self.channel.send(READY)
            while True:
                record = self.pending.popleft() if self.pending else self._next(None)
                if record is None or record[0] == ACK or record[0] not in self.signums:
                    continue  # a stale acknowledgement, or a signal the job keeps to itself
                self._guard(record[0])
        except (ParentGone, OSError):  # the job has exited, or its end is gone
            return

    def _guard(self, signum: int) -> None:
        self._relay(signum)
        granted = self._acknowledged(signum)
        if granted is None:
            if default_action(self.pid, signum):
                self._send(signum)  # the GIL is held: the default action ends the job
            return
        if granted == NOT_OURS:
            return  # the job's own handler decides, as it would in the plain job
        deadline = time.monotonic() + granted
        while (left := deadline - time.monotonic()) > 0:
            record = self._next(left)
            if record is not None:
                self.pending.append(record)
        self._send(signum)  # still alive: a new round (our handler resets on delivery)

    def _relay(self, signum: int) -> None:
        with contextlib.suppress(BlockingIOError):  # the watcher far behind has it already
            self.channel.send(bytes([signum]), socket.MSG_DONTWAIT)

    def _acknowledged(self, signum: int) -> float | None:
        """Seconds granted by the watcher's acknowledgement of ``signum``, if it comes
        within the wait (None: no acknowledgement; ``NOT_OURS``: not our handler)."""
        deadline = time.monotonic() + self.ack_wait_s
        while (left := deadline - time.monotonic()) > 0:
            record = self._next(left)
            if record is None:
                return None
            if record[0] == ACK and len(record) >= 3 and record[1] == signum:
                return float(record[2])
            if record[0] != ACK:
                self.pending.append(record)
        return None

    def _next(self, timeout_s: float | None) -> bytes | None:
        return _receive(self.channel, timeout_s=timeout_s)

    def _send(self, signum: int) -> None:
        try:
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, signum)
            else:
                os.kill(self.pid, signum)
        except OSError:
            pass  # already gone


def _pidfd(pid: int) -> int | None:
    """A handle on the job that can never signal another process reusing its pid."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def main(argv: list[str]) -> None:
    pid, fd, ack_wait_s = int(argv[1]), int(argv[2]), float(argv[3])
    signums = frozenset(int(value) for value in argv[4:])
    signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    channel = socket.socket(fileno=fd)
    Sentinel(pid, channel, ack_wait_s=ack_wait_s, signums=signums).watch()


if __name__ == "__main__":
    main(sys.argv)
