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

A function made ``with_room`` runs in a frame that declares a value stack of half of
``ROOM_CHUNK_BYTES``: the traced backend's one frame and the traced AOT compiler's are such
rooms, so the compile they delegate to starts on a chunk of its own, with no frame added
(``call_with_room`` makes any call from such a frame, for benches and tests). That
frame cannot fit in any ordinary chunk, nor in what another
room leaves, so CPython maps a chunk of ``ROOM_CHUNK_BYTES`` for it, and everything the
call does above it has the other half to itself: no boundary inside the compile, whatever
the depth it starts at, and a room opened inside a room gets a chunk of its own too. The
declared slots are never written, so their pages are not faulted in (unless transparent
huge pages back the chunk with one page), and the chunk is unmapped when the call returns
(a ``mmap``/``munmap`` pair per compile). A CPython that keeps a freed chunk for reuse
(gh-142183, in 3.13 patch releases from March 2026) spares most of the thrashing by
itself; there the room changes little but costs no more than its own chunk. Before 3.11
(frames on the heap), from 3.15 (a frame stack that may change again) and on other
interpreters it is an ordinary call.
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
ROOM_FRAME_SLOTS = ROOM_CHUNK_BYTES // 2 // SLOT_BYTES
"""Value-stack slots of the room's frame: with CPython's ``MINIMUM_OVERHEAD`` of 1,000
slots a new chunk must hold beyond it, more than half a chunk of ``ROOM_CHUNK_BYTES``, so a
whole one is mapped; and more than the room above another room's frame."""
CHUNKED_FRAME_STACK_VERSIONS = ((3, 11), (3, 15))
"""CPython versions (from, before) whose frame stack ``push_chunk`` grows as described."""


F = TypeVar("F", bound=Callable[..., Any])


def has_chunked_frame_stack() -> bool:
    """Whether this interpreter's frame stack grows in chunks as the docstring says."""
    first, after_last = CHUNKED_FRAME_STACK_VERSIONS
    return sys.implementation.name == "cpython" and first <= sys.version_info[:2] < after_last


def with_room(function: F) -> F:
    """``function``, its frame declaring the room (module docstring); unchanged where the
    interpreter's frame stack is not chunked as described, or refuses the code object."""
    if has_chunked_frame_stack():
        with contextlib.suppress(TypeError, ValueError):
            function.__code__ = function.__code__.replace(co_stacksize=ROOM_FRAME_SLOTS)
    return function


@with_room
def call_with_room(call: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``call(*args, **kwargs)``, with a frame-stack chunk of its own (module docstring)."""
    return call(*args, **kwargs)
