"""Room on CPython's frame stack for a whole compile, so wrapper frames cannot slow it.

CPython 3.11 and later keep a thread's Python frames on a stack of memory chunks
(``_PyThreadState_PushFrame``, ``Python/pystate.c``): a call that does not fit in the
current chunk maps a new one (16 KiB, or the next power of two that holds the frame plus
1,000 slots), and that chunk is unmapped as soon as the frame at its base returns. Dynamo
and AOT Autograd recurse deeply and return over and over; wherever that recursion goes up
and down across a chunk boundary, every crossing costs an ``mmap``, page faults and an
``munmap``. Where the boundaries fall depends on how deep the compile starts, so every
frame a wrapper adds below a compile moves them: on a Hugging Face GPT-2 training job
(aot_eager), the frames of otel_dynamo's wrappers moved them onto hotter spots and the
job took 50,000 more page faults and 0.3 s more system time than untraced.

``call_with_room`` makes the call from a frame that declares a value stack of just over
half of ``ROOM_CHUNK_BYTES``. That frame cannot fit in any ordinary chunk, so CPython maps
a chunk of ``ROOM_CHUNK_BYTES`` for it, and everything the call does above it has the
other half to itself: no boundary inside the compile, whatever the depth it starts at.
The declared slots are never written, so their pages are never faulted in, and the chunk
is unmapped when the call returns (a ``mmap``/``munmap`` pair per compile). Elsewhere
(CPython 3.10's heap-allocated frames, other interpreters) it is an ordinary call.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

ROOM_CHUNK_BYTES = 2 * 1024 * 1024
"""The frame-stack chunk a compile runs in; about half of it is room for the compile."""
SLOT_BYTES = 8
"""One frame-stack slot, a ``PyObject *``."""
CHUNK_OVERHEAD_SLOTS = 1000
"""CPython's ``MINIMUM_OVERHEAD``: slots a new chunk must hold beyond the frame it is for."""
ROOM_FRAME_SLOTS = ROOM_CHUNK_BYTES // 2 // SLOT_BYTES - CHUNK_OVERHEAD_SLOTS + 1
"""Value-stack slots that make CPython map a chunk of ``ROOM_CHUNK_BYTES``, not half."""


def call_with_room(call: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``call(*args, **kwargs)``, with a frame-stack chunk of its own (module docstring)."""
    return call(*args, **kwargs)


def _has_chunked_frame_stack() -> bool:
    return sys.implementation.name == "cpython" and sys.version_info >= (3, 11)


def _declare_room() -> None:
    if not _has_chunked_frame_stack():
        return
    # An interpreter that refuses the code object keeps an ordinary call.
    with contextlib.suppress(TypeError, ValueError):
        call_with_room.__code__ = call_with_room.__code__.replace(co_stacksize=ROOM_FRAME_SLOTS)


_declare_room()
