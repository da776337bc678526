"""Where the embedded default writes: one OTLP/JSON Lines file per process and signal.

Names are ``<signal>-<host>-<pid>-<start>-<token>.jsonl`` (start as UTC
``YYYYmmddTHHMMSSZ``, token random), so every rank of a job, and every forked child, can
write into one shared directory, and nobody can plant something at a name before us.
Each file is created new, owner-only, never through a link and never a FIFO or device
(``O_CREAT|O_EXCL|O_NOFOLLOW|O_NONBLOCK``), when the first export needs it — on an
exporter's thread, never on the compile or run thread. A file whose first write puts no
byte down (disk full, file size limit) is removed again at once, so a full filesystem
leaves no empty telemetry files behind.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import socket
import stat
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

FILE_SUFFIX = ".jsonl"
STAMP_FORMAT = "%Y%m%dT%H%M%SZ"
FILE_MODE = 0o600
DIRECTORY_MODE = 0o700
"""Modes of what otel_dynamo creates: telemetry may hold code, paths and values."""
_CREATE_FLAGS = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | os.O_APPEND
    | os.O_NONBLOCK
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_host_name() -> str:
    return _UNSAFE.sub("_", socket.gethostname()) or "host"


def start_stamp(epoch_s: float | None = None) -> str:
    return time.strftime(STAMP_FORMAT, time.gmtime(time.time() if epoch_s is None else epoch_s))


def telemetry_file_name(
    signal: str, *, host: str, pid: int, stamp: str, token: str = "0" * 8
) -> str:
    return f"{signal}-{host}-{pid}-{stamp}-{token}{FILE_SUFFIX}"


class ProcessFiles:
    """The telemetry files of the current process in one directory (pid checked per call)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._host = safe_host_name()
        self._names: dict[int, tuple[str, str]] = {}

    def path(self, signal: str) -> Path:
        pid = os.getpid()
        stamp, token = self._names.setdefault(pid, (start_stamp(), secrets.token_hex(4)))
        name = telemetry_file_name(signal, host=self._host, pid=pid, stamp=stamp, token=token)
        return self.directory / name

    def open(self, signal: str) -> LineFile:
        """This process's file of ``signal``, created at its first write (OSError there
        if that is not safe): the metrics exporter is built on the compile thread."""
        return LineFile(self.path(signal))


def create_private_file(path: Path) -> int:
    """A new regular file at ``path``, owner-only, opened for appending; raises OSError
    if anything is there already (file, link, FIFO) or it is not a regular file."""
    descriptor = os.open(path, _CREATE_FLAGS, FILE_MODE)
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise OSError(errno.EINVAL, f"{path} is not a regular file")
        os.set_blocking(descriptor, True)
    except OSError:
        os.close(descriptor)
        raise
    return descriptor


class LineFile:
    """The text stream an OTLP/JSON file exporter writes whole lines to.

    The file is created (``create_private_file``) at the first write, on the exporter's
    thread. Each write goes down with ``os.write`` until every byte is written; if one
    fails part-way (disk full), the next write starts with a newline, so a torn line
    stays one bad line instead of swallowing the next record. If a write fails before
    any byte of the file is down, the file we just created is closed and removed (only
    while the name still points at it) and the error raised: the next write creates it
    again, so telemetry that fits later is kept, and a process that never gets a byte
    down leaves no file at all. An empty text creates nothing.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._descriptor: int | None = None
        self._empty = True
        """No byte is down in the file we hold (or none is held)."""
        self._torn = False
        self._lock = threading.Lock()
        self.closed = False

    def write(self, text: str) -> int:
        data = text.encode("utf-8")
        if not data:
            return 0
        with self._lock:
            if self._descriptor is None:
                self._descriptor = create_private_file(self.path)
                self._empty = True
            if self._torn:
                data = b"\n" + data
            self._torn = True  # until the last byte is down
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(self._descriptor, view) :]
                    self._empty = False
            except OSError:
                if self._empty:
                    self._remove_empty_file()
                raise
            self._torn = False
        return len(text)

    def _remove_empty_file(self) -> None:
        """Close and unlink the file we created and put nothing in (lock held), unless
        something else has taken its name meanwhile."""
        descriptor, self._descriptor, self._torn = self._descriptor, None, False
        if descriptor is None:
            return
        try:
            ours = os.fstat(descriptor)
            there = os.lstat(self.path)
            if (ours.st_dev, ours.st_ino) == (there.st_dev, there.st_ino):
                os.unlink(self.path)
        except OSError:
            pass
        finally:
            os.close(descriptor)

    def flush(self) -> None:
        """Nothing is buffered here."""

    def fileno(self) -> int:
        if self._descriptor is None:
            raise ValueError("not created yet")
        return self._descriptor

    def close(self) -> None:
        with self._lock:
            if not self.closed and self._descriptor is not None:
                os.close(self._descriptor)
            self.closed = True


def prepare_directory(directory: str | os.PathLike[str]) -> str | None:
    """Create ``directory`` (owner-only when we create it) and prove it writable; the
    reason it is not, or None."""
    try:
        os.makedirs(directory, mode=DIRECTORY_MODE, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory, prefix=".otel-dynamo-probe-"):
            pass
    except OSError as error:
        return error.strerror or str(error)
    return None


def disarm_inherited_stream(stream: Any) -> None:
    """In a forked child, point an inherited file's descriptor at /dev/null.

    Whatever the parent had buffered in that file object at the fork is then flushed
    nowhere when the child's copy is flushed or closed, instead of being written to the
    file a second time. The parent's descriptor is not affected.
    """
    try:
        descriptor = stream.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
    except (AttributeError, OSError, ValueError):
        return
    try:
        os.dup2(devnull, descriptor)
    except OSError:
        pass
    finally:
        os.close(devnull)
