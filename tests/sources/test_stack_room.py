"""Compiles run with a frame-stack chunk of their own (``stack_room``): a call in there
maps no memory per frame, and Dynamo's frame compiles and lazily compiled backwards are
made from it."""

from __future__ import annotations

import resource
import sys
import types
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func

import otel_dynamo
from otel_dynamo._sources.stack_room import (
    ROOM_FRAME_SLOTS,
    call_with_room,
    has_chunked_frame_stack,
)

CHUNKED_FRAME_STACK = has_chunked_frame_stack()
ORDINARY_CHUNK_BYTES = 16 * 1024
ROOM_BYTES = 1000 * 1024
"""The room a compile gets above it, at least."""
CALLS = 5_000


def _function_with_frame_of(slots: int) -> Callable[[], int]:
    """A function whose frame declares ``slots`` value-stack slots (never written)."""

    def large() -> int:
        return 1

    large.__code__ = large.__code__.replace(co_stacksize=slots)
    return large


def _call_repeatedly(function: Callable[[], int], times: int) -> None:
    for _ in range(times):
        function()


def _page_faults(call: Callable[[], object]) -> int:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    call()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def _rooms_below() -> int:
    """How many frames that declare the room (``with_room``) this frame runs above."""
    rooms = 0
    frame: types.FrameType | None = sys._getframe()
    while frame is not None:
        rooms += frame.f_code.co_stacksize >= ROOM_FRAME_SLOTS
        frame = frame.f_back
    return rooms


def test_call_with_room_returns_the_result_and_passes_arguments() -> None:
    """Positional and keyword arguments reach the call unchanged; its result comes back."""
    assert call_with_room(divmod, 17, 5) == (3, 2)
    assert call_with_room(int, "ff", base=16) == 255


def test_call_with_room_reraises_the_callers_exception_unchanged() -> None:
    """The exception the call raises is the very object the caller gets."""
    raised = KeyError("mine")

    def fail() -> None:
        raise raised

    with pytest.raises(KeyError) as caught:
        call_with_room(fail)
    assert caught.value is raised


def _skip_unless_each_call_maps_a_chunk(large: Callable[[], int]) -> None:
    """The baseline: outside any room, every call of ``large`` faults in a fresh chunk."""
    outside = _page_faults(lambda: _call_repeatedly(large, CALLS))
    if outside < CALLS:
        pytest.skip(f"this CPython reuses freed frame-stack chunks ({outside} page faults)")


@pytest.mark.skipif(not CHUNKED_FRAME_STACK, reason="no chunked frame stack on this Python")
@pytest.mark.parametrize("frame_bytes", [ORDINARY_CHUNK_BYTES + 1024, ROOM_BYTES])
def test_calls_made_in_the_room_map_no_frame_stack_chunks(frame_bytes: int) -> None:
    """A frame too large for the chunk it is called from maps (and faults in) a fresh chunk
    at every call; made from inside the room, the same calls fit, up to ROOM_BYTES."""
    large = _function_with_frame_of(frame_bytes // 8)
    _skip_unless_each_call_maps_a_chunk(large)
    inside = _page_faults(lambda: call_with_room(_call_repeatedly, large, CALLS))
    assert inside < CALLS // 100


@pytest.mark.skipif(not CHUNKED_FRAME_STACK, reason="no chunked frame stack on this Python")
def test_a_room_opened_inside_a_room_has_room_too() -> None:
    """A room opened just above another gets a chunk of its own rather than the little
    space left in the outer one (frame compiles open one, AOT's inner compiles another)."""
    large = _function_with_frame_of((ORDINARY_CHUNK_BYTES + 1024) // 8)
    _skip_unless_each_call_maps_a_chunk(large)
    nested = _page_faults(lambda: call_with_room(call_with_room, _call_repeatedly, large, CALLS))
    assert nested < CALLS // 100


def _noting_compiler(seen: dict[str, int], kind: str) -> Callable[..., Any]:
    def compile_graph(gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
        seen[kind] = _rooms_below()
        return make_boxed_func(gm.forward)

    return compile_graph


def test_frame_compiles_and_lazy_backwards_run_in_the_room(provider) -> None:
    """The traced forward compile runs above two rooms (the traced backend's frame and AOT's
    traced compiler's), and no frame of ours wraps the frame compile; the backward AOT
    Autograd compiles lazily at the first .backward(), after the frame compile returned,
    above its own room."""
    seen: dict[str, int] = {}
    inner = aot_autograd(
        fw_compiler=_noting_compiler(seen, "forward"),
        bw_compiler=_noting_compiler(seen, "backward"),
    )
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    compiled = torch.compile(model, backend=otel_dynamo.traced(inner, tracer_provider=provider))
    loss = compiled(torch.randn(3, 4)).sum()
    assert seen == {"forward": 2}
    loss.backward()
    assert seen == {"forward": 2, "backward": 1}
    assert _rooms_below() == 0
