"""The device a compiled graph runs on, and a clock of CUDA events there.

A graph whose inputs are on a CUDA device gets that device's :class:`CudaClock`; its
recorded runs are then timed on the device (``_recording/device_time.py``). Graphs on
the CPU get none: their run span's own duration is the time. Public torch API only:
``torch.cuda.Event(enable_timing=True)``, recorded on ``torch.cuda.current_stream`` of
the graph's device (the stream the compiled call enqueues on, whatever device is
current), and ``torch.cuda.is_current_stream_capturing`` (no event is recorded inside a
CUDA graph capture the job itself is making).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

CUDA = "cuda"


class CudaClock:
    """CUDA events of one device, recorded on its current stream."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.device = f"{CUDA}:{index}"

    def new_event(self) -> Any:
        import torch

        return torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]  # untyped in torch

    def record(self, event: Any) -> None:
        import torch

        event.record(torch.cuda.current_stream(self.index))

    def capturing(self) -> bool:
        import torch

        return bool(torch.cuda.is_current_stream_capturing())

    def __repr__(self) -> str:
        return f"CudaClock({self.device})"


@functools.cache
def cuda_clock(index: int) -> CudaClock:
    """One clock per device (its free events are shared by the device's graphs)."""
    return CudaClock(index)


def clock_for(example_inputs: Iterable[Any]) -> CudaClock | None:
    """The clock of the first CUDA device among a graph's tensor inputs, else None."""
    for value in example_inputs:
        device: Any = getattr(value, "device", None)
        if getattr(device, "type", None) == CUDA:
            index = device.index
            if index is None:
                import torch

                index = torch.cuda.current_device()
            return cuda_clock(int(index))
    return None
