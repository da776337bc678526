"""The CUDA-graph decisions inductor makes, read where inductor makes them.

When CUDA graphs are asked for (``mode="reduce-overhead"``: inductor's
``triton.cudagraphs``), inductor decides per compiled graph whether to graph it, in the
graph's compile (``post_compile``), and cudagraph trees decide again at runs (mutated
inputs seen at a run, the re-recording limit). Every skip bumps
``counters["inductor"]["cudagraph_skips"]``; on CUDA it is also stated, through
``log_cudagraph_skip_and_bump_counter(msg)`` (the text of the ``cudagraphs`` log and of
``cudagraph_skip_reason``). On other devices torch only counts, and keeps the reason on
the compiled graph (``disabled_cudagraphs_reason``).

So a compile step is watched (:func:`watching`): the counters before and after, the
messages torch stated meanwhile, and, for a skip torch did not state, the compiled
graph's own reason in the words torch uses for it on CUDA ("skipping cudagraphs due to
..."). Skips stated outside any watched compile are decided at a run and go to the
run being recorded, if any (:func:`on_run_skip`). The statement is tapped, not
replaced: :class:`SkipTap` wraps ``log_cudagraph_skip_and_bump_counter`` in
``torch._inductor.cudagraph_utils`` and wherever inductor and Dynamo bound it by name
(2.8 to 2.15), installed the first time a traced compile asks for CUDA graphs (inductor
is loaded by then).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import logging
import threading
from collections.abc import Callable
from typing import Any

from otel_dynamo import names
from otel_dynamo._recording.pass_through import passes_through
from otel_dynamo._recording.recorder import Recorder
from otel_dynamo._recording.run_state import RunState
from otel_dynamo._sources import patching
from otel_dynamo._sources.torch_version import torch_version

_log = logging.getLogger(__name__)

SKIP_FUNCTION = "log_cudagraph_skip_and_bump_counter"
SKIP_MODULE = "torch._inductor.cudagraph_utils"
_REBOUND_IN = ("torch._inductor.", "torch._dynamo.")
STATED_PREFIX = "skipping cudagraphs due to "
"""How torch states a compiled graph's own reason (``disabled_cudagraphs_reason``) on CUDA."""
MAX_UNWRAP = 4
CATEGORIES = (
    ("cpu device", names.CUDAGRAPH_CATEGORY_CPU_DEVICE),
    ("non-cuda device", names.CUDAGRAPH_CATEGORY_CPU_DEVICE),
    ("mutated input", "mutated_inputs"),
    ("mutation", "mutated_inputs"),
    ("dynamic shape", "dynamic_shapes"),
    ("symint", "dynamic_shapes"),
    ("multiple devices", "multiple_devices"),
    ("re-recording limit", "rerecord_limit"),
    ("incompatible op", "incompatible_ops"),
    ("cudagraph-unsafe", "incompatible_ops"),
    ("unsupported", "incompatible_ops"),
)
"""Reason text -> a bounded category for metric labels (first match wins)."""
OTHER_CATEGORY = "other"
MULTIPLE_DEVICES = "multiple devices"
NOT_ON_CUDA_CATEGORY = names.CUDAGRAPH_CATEGORY_CPU_DEVICE
"""A graph with no CUDA device at all: whatever torch's text says of it (with graph
partitions on, a CPU-only graph reads "multiple devices: " with none listed), it was
skipped because CUDA graphs need CUDA."""
UNSTATED = "not stated by torch"
"""The reason of a counted skip torch neither stated nor kept where we could read it (a
graph loaded from AOT Autograd's cache on a device other than CUDA)."""


@dataclasses.dataclass
class Watch:
    """One compile step being watched."""

    skips_before: int
    partitions_before: int
    stated: list[str] = dataclasses.field(default_factory=list)
    inner_skips: int = 0
    """Skips a watch nested in this one decided (a backward compiled inside the graph's
    compile): its own, not counted again here."""
    inner_partitions: int = 0


@dataclasses.dataclass(frozen=True)
class Decision:
    """What inductor decided for one compiled graph."""

    decision: str
    reason: str | None
    category: str | None
    partitions: int


RunSkip = Callable[[str], None]
"""Told a skip stated at a run (the recorder of the run in progress, if any)."""

_watch: contextvars.ContextVar[Watch | None] = contextvars.ContextVar(
    "otel_dynamo_cudagraph_watch", default=None
)
_run_skip: contextvars.ContextVar[RunSkip | None] = contextvars.ContextVar(
    "otel_dynamo_cudagraph_run", default=None
)


def requested() -> bool:
    """CUDA graphs asked for in the inductor config in force (a compile's patches)."""
    import sys

    config = sys.modules.get("torch._inductor.config")
    return bool(config is not None and getattr(config.triton, "cudagraphs", False))


def asked_by(backend: Any) -> bool:
    """A backend carrying inductor config patches that ask for CUDA graphs (torch's
    ``_TorchCompileInductorWrapper`` of ``mode="reduce-overhead"``)."""
    config = getattr(backend, "config", None)
    return isinstance(config, dict) and bool(config.get("triton.cudagraphs"))


def _counter(name: str) -> int:
    """One of inductor's counters, read without adding a key: ``counters`` is a
    defaultdict, and the traced job's counters must stay the plain job's."""
    from torch._dynamo.utils import counters

    inductor: Any = counters.get("inductor")
    return 0 if inductor is None else int(inductor.get(name, 0))


def watching(*, asked: bool, active: bool = True) -> Watching:
    """Watch a compile step for CUDA-graph skips (the step's skips land in the Watch);
    None, and nothing watched, where this torch has no such counters. ``asked``: CUDA
    graphs are known to be wanted, so the statement tap is installed now (otherwise at
    :func:`noticed`, when an inner compile sees inductor's patched config). Not
    ``active``: watches nothing, and gives None."""
    return Watching(asked=asked, active=active)


class Watching:
    """The context of :func:`watching` (a class of ours, so that a pass-through frame may
    enter it: ``_recording.pass_through``)."""

    def __init__(self, *, asked: bool, active: bool) -> None:
        self._asked = asked
        self._active = active
        self._watch: Watch | None = None
        self._outer: Watch | None = None
        self._token: contextvars.Token[Watch | None] | None = None

    def __enter__(self) -> Watch | None:
        if not self._active:
            return None
        try:
            if self._asked:
                _skip_tap.ensure()
            self._watch = Watch(_counter("cudagraph_skips"), _counter("cudagraph_partitions"))
        except Exception:
            _skip_tap.failed("could not read inductor's CUDA graph counters")
            self._watch = None
        self._outer = _watch.get()
        self._token = _watch.set(self._watch)
        return self._watch

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            _watch.reset(self._token)
        outer, watch = self._outer, self._watch
        if outer is not None and watch is not None:
            with contextlib.suppress(Exception):
                outer.inner_skips += _counter("cudagraph_skips") - watch.skips_before
                outer.inner_partitions += _counter("cudagraph_partitions") - watch.partitions_before


def noticed() -> bool:
    """Inside an inner compile: CUDA graphs are asked for (then the tap is installed)."""
    if requested():
        _skip_tap.ensure()
        return True
    return False


def decided(watch: Watch, compiled: Any, input_devices: frozenset[str] = frozenset()) -> Decision:
    """The decision for the graph compiled while ``watch`` was open (``compiled``: what
    its inner compiler returned, for a reason torch kept but did not state;
    ``input_devices``: its tensor inputs' device types, where ``compiled`` tells none)."""
    skips = _counter("cudagraph_skips") - watch.skips_before - watch.inner_skips
    partitions = _counter("cudagraph_partitions") - watch.partitions_before - watch.inner_partitions
    if skips <= 0:
        return Decision(names.CUDAGRAPH_GRAPHED, None, None, partitions)
    reason = watch.stated[-1] if watch.stated else own_reason(compiled)
    devices = graph_devices(compiled) or input_devices or None
    if devices is not None and "cuda" not in devices:
        shown = reason or f"{STATED_PREFIX}no CUDA device ({', '.join(sorted(devices))})"
        return Decision(names.CUDAGRAPH_SKIPPED, shown, NOT_ON_CUDA_CATEGORY, partitions)
    return Decision(names.CUDAGRAPH_SKIPPED, reason or UNSTATED, category(reason), partitions)


def graph_devices(compiled: Any) -> frozenset[str] | None:
    """The device types of the compiled graph (inductor's ``device_types``, found down
    ``__wrapped__``), None where none is readable."""
    current = compiled
    for _ in range(MAX_UNWRAP):
        if current is None:
            return None
        devices = getattr(current, "device_types", None)
        if isinstance(devices, (set, frozenset, list, tuple)) and devices:
            return frozenset(str(device) for device in devices)
        current = getattr(current, "__wrapped__", None)
    return None


def own_reason(compiled: Any) -> str | None:
    """The compiled graph's ``disabled_cudagraphs_reason`` as torch states it on CUDA
    (found down ``__wrapped__`` from what the inner compiler returned)."""
    current = compiled
    for _ in range(MAX_UNWRAP):
        if current is None:
            return None
        reason = getattr(current, "disabled_cudagraphs_reason", None)
        if isinstance(reason, str) and reason:
            return reason if reason.startswith(STATED_PREFIX) else STATED_PREFIX + reason
        info = getattr(current, "cudagraph_info", None)
        fails = getattr(info, "cudagraph_fail_reasons", None)
        if fails:
            return f"{STATED_PREFIX}{fails}"
        current = getattr(current, "__wrapped__", None)
    return None


def category(reason: str | None) -> str:
    """The bounded kind of torch's reason text (``CATEGORIES``); "multiple devices" that
    names no CUDA device is a graph without one (``NOT_ON_CUDA_CATEGORY``)."""
    text = (reason or "").lower()
    if MULTIPLE_DEVICES in text and "cuda" not in text.split(MULTIPLE_DEVICES, 1)[1]:
        return NOT_ON_CUDA_CATEGORY
    for marker, kind in CATEGORIES:
        if marker in text:
            return kind
    return OTHER_CATEGORY


def _stated(message: str) -> None:
    watch = _watch.get()
    if watch is not None:
        watch.stated.append(message)
        return
    on_skip = _run_skip.get()
    if on_skip is not None:
        on_skip(message)


class SkipTap:
    """Wraps inductor's skip statement wherever it is bound, and forwards to it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tried = False
        self._failed_once = False

    def ensure(self) -> None:
        """Install once (never raises: a torch without the statement records less)."""
        if self._tried:
            return
        with self._lock:
            if self._tried:
                return
            self._tried = True
            try:
                self.install()
            except Exception as error:
                _log.warning(
                    "otel_dynamo: the CUDA graph skip hook does not fit torch %s (%s: %s); "
                    "skip reasons torch states are not recorded (counted skips are)",
                    torch_version(),
                    type(error).__name__,
                    error,
                )

    def install(self) -> None:
        import importlib

        module = importlib.import_module(SKIP_MODULE)
        original = getattr(module, SKIP_FUNCTION)
        tap = patching.patch(module, SKIP_FUNCTION, self._tap)
        if tap is not original:
            patching.rebind(original, tap, SKIP_FUNCTION, _REBOUND_IN)

    def uninstall(self) -> None:
        import sys

        module = sys.modules.get(SKIP_MODULE)
        if module is None or not self._tried:
            return
        tap, outermost = (
            getattr(module, SKIP_FUNCTION),
            patching.patched(module, SKIP_FUNCTION, self._tap),
        )
        patching.unpatch(module, SKIP_FUNCTION, self._tap)
        if outermost:
            patching.rebind(tap, tap.__wrapped__, SKIP_FUNCTION, _REBOUND_IN)
        self._tried = False

    def failed(self, what: str) -> None:
        """Log ``what`` went wrong, once per process."""
        if not self._failed_once:
            self._failed_once = True
            _log.warning("otel_dynamo: %s on torch %s", what, torch_version(), exc_info=True)

    @passes_through
    def _tap(
        self,
        skip: Callable[..., Any],
        _instance: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        try:
            message = args[0] if args else kwargs.get("msg")
            if isinstance(message, str):
                _stated(message)
        except Exception:  # telemetry must never break a compile or a run
            self.failed("could not record a CUDA graph skip")
        return skip(*args, **kwargs)


_skip_tap = SkipTap()


def uninstall() -> None:
    _skip_tap.uninstall()


class SkipAwareRecorder:
    """Records a graph's runs through its recorder, with the CUDA-graph skips cudagraph
    trees state during a recorded run put on that run's span."""

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder

    @passes_through
    def record_run(
        self, run: RunState, compiled: Callable[..., Any], args: Any, kwargs: dict[str, Any]
    ) -> Any:
        token = _run_skip.set(lambda message: self._skipped(run, message))
        try:
            return self._recorder.record_run(run, compiled, args, kwargs)
        finally:
            _run_skip.reset(token)

    def _skipped(self, run: RunState, message: str) -> None:
        fields = {
            names.ATTR_COMPILE_ID: run.identity.compile_id,
            names.ATTR_RUN_KIND: run.kind,
            names.ATTR_CUDAGRAPH_AT: names.CUDAGRAPH_AT_RUN,
        }
        self._recorder.cudagraph_decided(
            run.current_span,
            fields,
            decision=names.CUDAGRAPH_SKIPPED,
            reason=message,
            category=category(message),
        )
