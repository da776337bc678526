"""Where the embedded default writes: one OTLP/JSON Lines file per process and signal.

Names are ``<signal>-<host>-<pid>-<start>.jsonl`` (start as UTC ``YYYYmmddTHHMMSSZ``),
so every rank of a job, and every forked child, can write into one shared directory.
"""

from __future__ import annotations

import os
import re
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

FILE_SUFFIX = ".jsonl"
STAMP_FORMAT = "%Y%m%dT%H%M%SZ"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_host_name() -> str:
    return _UNSAFE.sub("_", socket.gethostname()) or "host"


def start_stamp(epoch_s: float | None = None) -> str:
    return time.strftime(STAMP_FORMAT, time.gmtime(time.time() if epoch_s is None else epoch_s))


def telemetry_file_name(signal: str, *, host: str, pid: int, stamp: str) -> str:
    return f"{signal}-{host}-{pid}-{stamp}{FILE_SUFFIX}"


class ProcessFiles:
    """The telemetry files of the current process in one directory (pid checked per call)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._host = safe_host_name()
        self._stamps: dict[int, str] = {}

    def path(self, signal: str) -> Path:
        pid = os.getpid()
        stamp = self._stamps.setdefault(pid, start_stamp())
        name = telemetry_file_name(signal, host=self._host, pid=pid, stamp=stamp)
        return self.directory / name


def prepare_directory(directory: str | os.PathLike[str]) -> str | None:
    """Create ``directory`` and prove it writable; the reason it is not, or None."""
    try:
        os.makedirs(directory, exist_ok=True)
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
