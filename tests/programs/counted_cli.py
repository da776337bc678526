"""``otel-dynamo`` with every line of Python it runs counted.

python counted_cli.py ARGS...: runs ``otel-dynamo ARGS`` (its output as usual), then
writes ``python lines: N`` as the last line on stderr: the lines of Python executed while
the command ran, imports included, except those of ``codecs`` (reading a file calls its
decoder once per 8 KiB read; the decoding is in C). Work done in C (json, re, str methods)
is not counted, so an N that does not grow with the length of a value in the input means
that no Python loop walks that value (run with PYTHONHASHSEED fixed: N is then the same
every time).
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

from otel_dynamo.cli import main

lines = 0


def _called(frame: FrameType, event: str, arg: Any) -> Any:
    return None if frame.f_globals.get("__name__") == "codecs" else _stepped


def _stepped(frame: FrameType, event: str, arg: Any) -> Any:
    global lines
    if event == "line":
        lines += 1
    return _stepped


if __name__ == "__main__":
    sys.settrace(_called)
    try:
        code = main(sys.argv[1:])
    finally:
        sys.settrace(None)
        print(f"python lines: {lines}", file=sys.stderr)
    sys.exit(code)
