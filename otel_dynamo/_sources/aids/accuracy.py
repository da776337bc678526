"""Accuracy checks: the first run of each compiled graph compared with the original graph.

The comparison is torch's own (``torch._dynamo.debug_utils.run_fwd_maybe_bwd`` on cloned
inputs, a float64 reference where one can be computed, ``torch._dynamo.utils.same``
with ``torch._dynamo.config.repro_tolerance``), as ``same_two_models`` does; only the
error sizes recorded next to the verdict are computed here. Both sides run on clones,
so the user's inputs, parameters and gradients are never touched, and under a forked
RNG so the user's random stream is the one it would have been without the check.

The aid, :class:`AccuracyCheck`, holds the graph as Dynamo made it (the reference) and
checks the first run of its compiled graph; a failed check gets an ``accuracy`` repro
script from the repro aid.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from otel_dynamo import names
from otel_dynamo._config.settings import ACCURACY_BACKWARD, ACCURACY_OFF, Settings
from otel_dynamo._recording.recorder import Recorder
from otel_dynamo._recording.run_state import RunState
from otel_dynamo._sources.aids import faults
from otel_dynamo._sources.aids.graph import AidedGraph, Compiling, GraphAid, earlier_aid
from otel_dynamo._sources.aids.repro import STAGE_ACCURACY, ReproScripts

if TYPE_CHECKING:
    from torch.fx import GraphModule


_log = logging.getLogger(__name__)
TINY = 1e-12
"""Floor of the reference magnitude in the relative error (an all-zero reference)."""


class Verdict:
    """The outcome of one check, as span attributes."""

    def __init__(self, passed: bool, max_abs: float, max_rel: float, tolerance: float) -> None:
        self.passed = passed
        self.attributes = {
            names.ATTR_ACCURACY_PASSED: passed,
            names.ATTR_ACCURACY_MAX_ABS_ERROR: max_abs,
            names.ATTR_ACCURACY_MAX_REL_ERROR: max_rel,
            names.ATTR_ACCURACY_TOLERANCE: tolerance,
        }


class _Callable:
    """Presents a compiled callable to torch's helpers, which expect a module."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def named_parameters(self) -> list[tuple[str, Any]]:
        return []

    def named_buffers(self) -> list[tuple[str, Any]]:
        return []


def compare(
    original: GraphModule, compiled: Callable[..., Any], inputs: list[Any], *, backward: bool
) -> Verdict:
    """Run original and compiled on clones of ``inputs`` (forward, maybe backward); compare."""
    import torch
    from torch._dynamo import config
    from torch._dynamo.debug_utils import run_fwd_maybe_bwd
    from torch._dynamo.utils import same

    only_fwd = not backward
    with torch.random.fork_rng(devices=[]):
        ref = run_fwd_maybe_bwd(original, inputs, only_fwd)
        fp64_ref = _fp64_reference(original, inputs, only_fwd)
        res = run_fwd_maybe_bwd(_Callable(compiled), inputs, only_fwd)  # type: ignore[arg-type]  # duck-types a module
    tolerance = float(config.repro_tolerance)
    passed = bool(same(ref, res, fp64_ref, tol=tolerance, equal_nan=True))
    return Verdict(passed, *_errors(ref, res), tolerance)


def _fp64_reference(original: GraphModule, inputs: list[Any], only_fwd: bool) -> Any:
    from torch._dynamo.debug_utils import (
        cast_to_fp64,
        clone_inputs_retaining_gradness,
        run_fwd_maybe_bwd,
    )

    try:
        model, examples = cast_to_fp64(
            copy.deepcopy(original), clone_inputs_retaining_gradness(inputs)
        )
        return run_fwd_maybe_bwd(model, examples, only_fwd)
    except Exception:  # as same_two_models: compare without it
        return None


def _errors(ref: Any, res: Any) -> tuple[float, float]:
    import torch
    from torch.utils._pytree import tree_leaves

    max_abs = max_rel = 0.0
    for expected, actual in zip(tree_leaves(ref), tree_leaves(res), strict=False):
        if not (isinstance(expected, torch.Tensor) and isinstance(actual, torch.Tensor)):
            continue
        if not (
            expected.is_floating_point() and expected.numel() and actual.shape == expected.shape
        ):
            continue
        expected64, actual64 = expected.detach().double(), actual.detach().double()
        diff = float((actual64 - expected64).abs().max())
        scale = max(float(expected64.abs().max()), TINY)
        max_abs, max_rel = max(max_abs, diff), max(max_rel, diff / scale)
    return max_abs, max_rel


def checked_first_run(
    compiled: Callable[..., Any],
    original: GraphModule,
    state: RunState,
    recorder: Recorder,
    *,
    backward: bool,
    on_failure: Callable[[list[Any], Verdict], None] = lambda inputs, verdict: None,
) -> Callable[..., Any]:
    """``compiled``, whose first run is followed by a check recorded on its run span."""
    done = False

    def run(*args: Any, **kwargs: Any) -> Any:
        nonlocal done
        if done or kwargs:
            return compiled(*args, **kwargs)
        done = True
        inputs = _clones(args)  # before the run: a compiled graph may mutate its inputs
        result = compiled(*args)
        if inputs is not None:
            _check(
                compiled,
                original,
                inputs,
                state=state,
                recorder=recorder,
                backward=backward,
                on_failure=on_failure,
            )
        return result

    return faults.like(run, compiled)


def _clones(args: tuple[Any, ...]) -> list[Any] | None:
    from torch._dynamo.debug_utils import clone_inputs_retaining_gradness

    try:
        return clone_inputs_retaining_gradness(list(args))
    except Exception:
        _log.warning("otel_dynamo: could not clone inputs for the accuracy check", exc_info=True)
        return None


def _check(
    compiled: Callable[..., Any],
    original: GraphModule,
    inputs: list[Any],
    *,
    state: RunState,
    recorder: Recorder,
    backward: bool,
    on_failure: Callable[[list[Any], Verdict], None],
) -> None:
    import torch

    try:
        # the eager reference must stay eager
        check = torch._dynamo.disable(compare)  # type: ignore[no-untyped-call]  # untyped in torch
        verdict = check(original, compiled, inputs, backward=backward)
        _record(verdict, state, recorder)
        if not verdict.passed:
            on_failure(inputs, verdict)
    except Exception:
        _log.warning("otel_dynamo: accuracy check failed to run (ignored)", exc_info=True)


def _record(verdict: Verdict, state: RunState, recorder: Recorder) -> None:
    span = state.current_span
    if span is not None:
        span.set_attributes(verdict.attributes)
    fields = {
        **state.identity.attributes(),
        names.ATTR_RUN_INDEX: state.count,
        **verdict.attributes,
    }
    recorder.log_events.accuracy_checked(verdict.passed, span, fields)


class AccuracyCheck:
    """The check of one graph's first run; a failed one gets an ``accuracy`` repro script."""

    def __init__(
        self,
        graph: AidedGraph,
        compiling: Compiling,
        original: GraphModule | None,
        earlier: Sequence[GraphAid],
    ) -> None:
        self.graph = graph
        self.original = original
        """The graph as Dynamo made it: the reference (None: no check)."""
        self.mode = graph.recorder.settings.accuracy
        self.repro = earlier_aid(earlier, ReproScripts)

    @staticmethod
    def wants_original(settings: Settings) -> bool:
        return settings.accuracy != ACCURACY_OFF

    @property
    def records_first_run(self) -> bool:
        return self.original is not None and self.mode != ACCURACY_OFF

    def before_compile(self, compiling: Compiling) -> None:
        pass

    def compile_failed(self, compiling: Compiling) -> None:
        pass

    def wrap_compiled(self, compiled: Callable[..., Any], state: RunState) -> Callable[..., Any]:
        if self.original is None or self.mode == ACCURACY_OFF:
            return compiled
        repro = self.repro

        def on_failure(inputs: list[Any], _verdict: Verdict) -> None:
            if repro is not None:
                repro.write(STAGE_ACCURACY, inputs, state.current_span, check_accuracy=True)

        return checked_first_run(
            compiled,
            self.original,
            state,
            self.graph.recorder,
            backward=self.mode == ACCURACY_BACKWARD,
            on_failure=on_failure,
        )
