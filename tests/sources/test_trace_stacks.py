"""torch's structured trace keeps the plain job's stacks (``_sources/trace_stacks.py``):
a stack torch captures while a compile runs beneath the traced backend is turned into
records without the frames of ours, and no file of ours is interned."""

from __future__ import annotations

import inspect
import traceback
from typing import Any

import pytest
import torch
from torch._logging import structured
from torch.utils._traceback import CapturedTraceback

import otel_dynamo
from otel_dynamo._sources import taps, trace_stacks
from otel_dynamo._sources.traceback_frames import PACKAGE_DIR

pytestmark = pytest.mark.torch_facing  # torch's own stack capture and interning


class _CapturingBackend:
    """A user's backend that records the stack as torch's guard records do."""

    def __init__(self) -> None:
        self.raw: list[traceback.FrameSummary] = []
        self.records: list[dict[str, Any]] = []

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
        self.raw = list(CapturedTraceback.extract().summary())
        self.records = structured.from_traceback(CapturedTraceback.extract().summary())
        return gm.forward


def _interned_files(records: list[dict[str, Any]]) -> list[str]:
    by_number = {number: name for name, number in structured.INTERN_TABLE.items()}
    return [by_number[record["filename"]] for record in records]


def test_a_stack_captured_beneath_the_traced_backend_holds_no_frame_of_ours(provider):
    """A backend called through the traced backend captures a stack holding our frames;
    torch's records of it hold every other frame, in order, and none of ours."""
    torch._dynamo.reset()
    user_backend = _CapturingBackend()
    backend = otel_dynamo.traced(user_backend, tracer_provider=provider)
    torch.compile(lambda x: x * 2, backend=backend)(torch.randn(3))
    ours = [f for f in user_backend.raw if f.filename.startswith(PACKAGE_DIR)]
    assert ours, "the traced backend's frame stands beneath the compile"
    files = _interned_files(user_backend.records)
    assert [f for f in files if f.startswith(PACKAGE_DIR)] == []
    others = [f for f in user_backend.raw if not f.filename.startswith(PACKAGE_DIR)]
    # the second capture is one line below the first: same frames, the last one's line differs
    assert files == [f.filename for f in others]
    assert user_backend.records[-1]["name"] == "__call__"
    assert user_backend.records[-1]["loc"].startswith("self.records = structured.from_traceback")


def test_a_stack_without_frames_of_ours_is_handed_over_as_it_is():
    """A stack holding no frame of ours reaches torch as the very same object."""
    stack = CapturedTraceback.extract().summary()
    assert trace_stacks.without_frames_of_ours(stack) is stack


def test_what_is_not_a_stack_of_frames_is_handed_over_as_it_is():
    """Anything else torch is given (here, frames as dictionaries) goes through unchanged."""
    stack = [{"filename": PACKAGE_DIR + "x.py"}]
    assert trace_stacks.without_frames_of_ours(stack) is stack


def test_only_frames_of_ours_are_taken_out():
    """Frames under otel_dynamo's package directory are taken out, the rest keep order."""
    frames = [
        traceback.FrameSummary("/job/train.py", 3, "<module>", lookup_line=False),
        traceback.FrameSummary(
            PACKAGE_DIR + "_sources/aot.py", 9, "_traced_aot", lookup_line=False
        ),
        traceback.FrameSummary("/torch/_functorch/aot.py", 5, "compile", lookup_line=False),
    ]
    kept = trace_stacks.without_frames_of_ours(frames)
    assert [f.filename for f in kept] == ["/job/train.py", "/torch/_functorch/aot.py"]


def test_torch_turns_stacks_into_records_with_one_function_of_one_argument(provider):
    """Canary: ``torch._logging.structured.from_traceback(tb)`` exists, takes the stack
    as its one parameter, and the tap sits on it once a traced backend exists."""
    otel_dynamo.traced("eager", tracer_provider=provider)
    original = inspect.unwrap(structured.from_traceback)
    assert list(inspect.signature(original).parameters) == ["tb"]
    assert taps._stacks.installed
