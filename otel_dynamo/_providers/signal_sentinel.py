"""The signal sentinel: a small process beside a traced job that ends the job by SIGTERM
or SIGHUP when the job cannot end itself because its main thread holds the GIL in C code.

Run as ``python -I -S signal_sentinel.py PARENT_PID FD ACK_WAIT_S SIGNUM...`` by the job's
signal watcher (``signal_wakeup``); it imports the standard library only.

Why a process: Python's C-level signal handler runs whatever the main thread does, but
everything after it (the Python handler, the watcher thread) needs the GIL. A main thread
stuck in a C call that holds the GIL never lets any of it run, so a job whose SIGTERM has
a Python handler (ours) would outlive a signal that ends the plain job at once. Only
something outside the process can act then.

How: ``FD`` is one end of a ``SOCK_SEQPACKET`` socket pair whose other end is the job's
wakeup fd (``signal.set_wakeup_fd``). The job's C-level handler writes each caught
signal's number there; the sentinel relays it back to the job's watcher thread and waits
``ACK_WAIT_S`` for the watcher's acknowledgement (a record ``[0, seconds]``: Python runs,
and will flush and end the job within ``seconds``). When no acknowledgement comes (the
GIL is held), or the granted time passes, the sentinel sends the signal again, but only
where the job's disposition for it is now the default action: the job's handler was
installed to reset on delivery (``SA_RESETHAND``), so the process then ends exactly as a
plain one would, with the same status. A signal the job handles itself (its own handler,
or ours put back) is never sent again. The sentinel ignores terminal signals (a signal
to the process group must not end it first) and exits when the job's end of the pair
closes: when the job exits, however it ends.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time

ACK = 0
"""First byte of the watcher's acknowledgement record; signal numbers start at 1."""
ACK_WAIT_S = 1.0
"""How long the watcher has to acknowledge a signal before the GIL counts as held."""
RECORD_BYTES = 16
PROC_STATUS = "/proc/{pid}/status"
IGNORED_HERE = ("SIGTERM", "SIGHUP", "SIGINT")


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


def _receive(channel: socket.socket, timeout_s: float | None) -> bytes | None:
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


def _granted_s(channel: socket.socket, wait_s: float) -> float | None:
    """Seconds the watcher asked for, if it acknowledged within ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while (left := deadline - time.monotonic()) > 0:
        record = _receive(channel, left)
        if record is None:
            return None
        if record[0] == ACK:
            return float(record[1]) if len(record) > 1 else 0.0
    return None


def _wait_for_exit(channel: socket.socket, wait_s: float) -> None:
    """Let the job end on its own for ``wait_s`` (ParentGone when it does)."""
    deadline = time.monotonic() + wait_s
    while (left := deadline - time.monotonic()) > 0:
        if _receive(channel, left) is None:
            return


def _end_by(pid: int, pidfd: int | None, signum: int) -> None:
    if not default_action(pid, signum):
        return  # the job handles this signal itself: it decides, as it would plain
    try:
        if pidfd is not None:
            signal.pidfd_send_signal(pidfd, signum)
        else:
            os.kill(pid, signum)
    except OSError:
        pass  # already gone


def watch(pid: int, channel: socket.socket, *, ack_wait_s: float, signums: frozenset[int]) -> None:
    """Relay and guard until the job exits."""
    pidfd = None
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(pid)  # never signals another process that reused the pid
        except OSError:
            pidfd = None
    try:
        while True:
            record = _receive(channel, None)
            if record is None or record[0] == ACK:
                continue
            signum = record[0]
            channel.send(bytes([signum]))
            if signum not in signums:
                continue
            granted = _granted_s(channel, ack_wait_s)
            if granted is not None:
                _wait_for_exit(channel, granted)
            _end_by(pid, pidfd, signum)
    except (ParentGone, OSError):  # the job has exited, or its end is gone
        return


def main(argv: list[str]) -> None:
    pid, fd, ack_wait_s = int(argv[1]), int(argv[2]), float(argv[3])
    signums = frozenset(int(value) for value in argv[4:])
    for name in IGNORED_HERE:
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    channel = socket.socket(fileno=fd)
    watch(pid, channel, ack_wait_s=ack_wait_s, signums=signums)


if __name__ == "__main__":
    main(sys.argv)
