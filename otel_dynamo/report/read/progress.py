"""Progress on one terminal line (stderr), shown only when that stream is a terminal."""

from __future__ import annotations

from typing import TextIO

LARGE_INPUT_BYTES = 16 * 1024 * 1024
"""Inputs smaller than this are read too fast to need a progress line."""

_MB = 1024 * 1024


class TerminalProgress:
    """Callable progress for :func:`load_telemetry`, plus named steps after reading.

    Writes nothing unless ``stream`` is a TTY, so logs and pipes stay clean.
    """

    def __init__(self, stream: TextIO, *, min_total_bytes: int = LARGE_INPUT_BYTES) -> None:
        isatty = getattr(stream, "isatty", None)
        self._stream = stream
        self._enabled = bool(isatty and isatty())
        self._min_total_bytes = min_total_bytes
        self._large = False
        self._width = 0

    def __call__(self, done: int, total: int) -> None:
        """Report ``done`` of ``total`` input bytes read."""
        self._large = self._large or total >= self._min_total_bytes
        if self._large:
            percent = 100 * done // total if total else 100
            self._show(f"reading {done / _MB:.0f} of {total / _MB:.0f} MB ({percent}%)")

    def window(self, done_ns: int, total_ns: int, traces: int) -> None:
        """Report a Jaeger window read up to ``done_ns`` of ``total_ns``, ``traces`` so far
        (always shown on a terminal: each query waits on the network)."""
        percent = 100 * done_ns // total_ns if total_ns else 100
        self._show(f"reading Jaeger: {traces} traces, {percent}% of the window")

    def step(self, what: str) -> None:
        """Name the step now running (only for large inputs: small ones are instant)."""
        if self._large:
            self._show(f"{what}…")

    def clear(self) -> None:
        """Remove the progress line, leaving the terminal as it was."""
        if self._enabled and self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()
            self._width = 0

    def _show(self, text: str) -> None:
        if not self._enabled:
            return
        line = f"otel-dynamo: {text}"
        self._stream.write("\r" + line.ljust(self._width))
        self._stream.flush()
        self._width = max(self._width, len(line))
