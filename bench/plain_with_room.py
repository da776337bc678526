"""Run a program untraced, but with each Dynamo frame compile made from otel_dynamo's
frame-stack room (``otel_dynamo._sources.stack_room``): how much a plain job would gain
from the room (a traced job's frame compiles have none since no frame of ours may wrap
them; its backend and lazy backward compiles do).

    python bench/plain_with_room.py PROGRAM [ARGS...]

``bench_real_models.py --room-baseline`` compares traced jobs with this too: the room
spares a compile CPython's frame-stack chunk thrashing, which the plain job pays, so
traced / plain shows what a user sees and traced / this shows otel_dynamo's own cost.
Lazily compiled backwards get no room here (a traced job's do); under aot_eager they are
a small part of the compile.
"""

from __future__ import annotations

import runpy
import sys
from typing import Any

from torch._dynamo import convert_frame

from otel_dynamo._sources.stack_room import call_with_room


def main() -> None:
    original = convert_frame.ConvertFrameAssert.__call__

    def with_room(self: Any, *args: Any, **kwargs: Any) -> Any:
        return call_with_room(original, self, *args, **kwargs)

    convert_frame.ConvertFrameAssert.__call__ = with_room  # type: ignore[method-assign]
    program, *arguments = sys.argv[1:]
    sys.argv = [program, *arguments]
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
