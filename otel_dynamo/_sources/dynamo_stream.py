"""Source: Dynamo's structured-trace stream, intercepted at ``torch._logging.trace_structured``.

Dynamo reports frame starts, graph breaks (all of them, including those with no graph
before them and loops that make it skip the frame), recompile reasons, guards, its
compilation metrics and its own phase timings through ``trace_structured``. Adding a
logging handler would make torch build every payload (a measured ~6% of a small
compile); wrapping the function lets us build only the payloads we read. Dynamo's
callers look the function up on the ``torch._logging`` module at call time; AOT
Autograd's and inductor's graph texts come from modules that bound it by name at import
(``from torch._logging import trace_structured``), so the tap also takes the place of
that binding in every torch module already imported (those imported later bind the tap).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
import types
from collections.abc import Callable, Mapping
from typing import Any

from otel_dynamo import names
from otel_dynamo._recording.boundary import class_name
from otel_dynamo._recording.pass_through import passes_through
from otel_dynamo._recording.sinks import StreamRecorder
from otel_dynamo._recording.stream_events import (
    SKIPPED_FRAME_KIND,
    SKIPPED_FRAME_PREFIX,
    CacheLookup,
    CodeLocation,
    CompileSettings,
    FrameEnded,
    FrameStarted,
    GraphBreakReported,
    GraphTextReported,
    GuardsReported,
    LazyBackwardEnded,
    LazyBackwardStarted,
    PhaseBoundary,
    RecompileReported,
)
from otel_dynamo._sources import patching
from otel_dynamo._sources.torch_version import torch_version

_log = logging.getLogger(__name__)

_STACK_LINE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')
_GUARD_LINE = re.compile(r"^[|\s]*\+- (?P<guard>[A-Z][A-Z0-9_]+: .+)$")
_SKIP_MARKERS = ("which results in a skip", "Skipping the function and falling back to eager")
_REASON_MARKER = "Graph Break Reason: "
_EXPLANATION_MARKER = "  Explanation: "
_TRACEBACK_MARKER = "Traceback (most recent call last):"
_HINT_LINE = re.compile(r"^\s*Hint: (?P<hint>.*)$")
_URL = re.compile(r"please visit: (?P<url>https?://\S+)")
_COMPILE_ID_PREFIX = re.compile(r"^\s*\d+/\d+: ")
OUTER_PHASE = "dynamo"
"""Dynamo's outermost timed event: the frame span itself stands for it."""
LAZY_BACKWARD_PHASE = "entire_backward_compile"
"""AOT Autograd's timed event around a backward compiled at its first run."""
CACHE_COUNTERS = {
    "aotautograd_local_cache_hit_count": names.ATTR_CACHE_AOT_HITS,
    "aotautograd_local_cache_miss_count": names.ATTR_CACHE_AOT_MISSES,
    "inductor_fx_local_cache_hit_count": names.ATTR_CACHE_FX_HITS,
    "inductor_fx_local_cache_miss_count": names.ATTR_CACHE_FX_MISSES,
    "inductor_fx_remote_cache_hit_count": names.ATTR_CACHE_FX_REMOTE_HITS,
    "inductor_fx_remote_cache_miss_count": names.ATTR_CACHE_FX_REMOTE_MISSES,
    "aotautograd_remote_cache_hit_count": names.ATTR_CACHE_AOT_REMOTE_HITS,
    "aotautograd_remote_cache_miss_count": names.ATTR_CACHE_AOT_REMOTE_MISSES,
}
"""CompilationMetrics counters copied onto the frame span when Dynamo reports them."""
MICROSECOND_FIELDS = {
    "guard_latency_us": names.ATTR_GUARD_LATENCY,
    "triton_compile_time_us": names.ATTR_TRITON_COMPILE_TIME,
}
"""CompilationMetrics microsecond fields copied onto the frame span, in seconds."""
CACHE_ARTIFACTS = {
    "fx_graph_cache_": names.CACHE_INDUCTOR_FX,
    "aotautograd_cache_": names.CACHE_AOT_AUTOGRAD,
}
"""Artifact name prefixes of cache lookups (the state follows: hit, miss, bypass)."""
CACHE_STATES = (names.CACHE_HIT, names.CACHE_MISS, names.CACHE_BYPASS)
UNKNOWN_KIND = "other"
GRAPH_TEXT_EVENTS = {
    "dynamo_output_graph": names.GRAPH_TEXT_DYNAMO,
    "aot_joint_graph": names.GRAPH_TEXT_AOT_JOINT,
    "aot_forward_graph": names.GRAPH_TEXT_AOT_FORWARD,
    "aot_backward_graph": names.GRAPH_TEXT_AOT_BACKWARD,
    "aot_inference_graph": names.GRAPH_TEXT_AOT_INFERENCE,
    "inductor_output_code": names.GRAPH_TEXT_OUTPUT_CODE,
    "dynamo_cpp_guards_str": names.GRAPH_TEXT_GUARDS,
}
"""trace_structured events whose payload is a graph's text, and the kind each becomes."""
AOT_TEXT_RUN_KINDS = {
    names.GRAPH_TEXT_AOT_FORWARD: names.RUN_KIND_FORWARD,
    names.GRAPH_TEXT_AOT_BACKWARD: names.RUN_KIND_BACKWARD,
    names.GRAPH_TEXT_AOT_INFERENCE: names.RUN_KIND_INFERENCE,
}
"""AOT Autograd's graph texts, and the compiled graph each one is."""
_AOT_GRAPH_NAME_KIND = re.compile(r"_(forward|backward|inference)_\d+$")


# --- payload parsing (pure functions, tested without torch) ----------------------------


def parse_user_stack(text: str) -> tuple[str, ...]:
    """'file:line in func' for each frame of the user stack, innermost last."""
    user_part = text.split(_TRACEBACK_MARKER, 1)[0]
    frames = []
    for line in user_part.splitlines():
        match = _STACK_LINE.match(line)
        if match:
            frames.append(f"{match['file']}:{match['line']} in {match['func'].strip()}")
    return tuple(frames)


def _break_type_and_explanation(text: str) -> tuple[str, str] | None:
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith(_EXPLANATION_MARKER) and index > 0:
            break_type = lines[index - 1].strip().removeprefix(_REASON_MARKER).strip()
            return break_type, line[len(_EXPLANATION_MARKER) :].strip()
    return None


def parse_hints(text: str) -> tuple[str, ...]:
    """torch's ``Hint:`` lines of a graph-break message, each with its indented
    continuation lines joined (``format_graph_break_message`` indents a long hint), each
    once, in order."""
    hints: list[list[str]] = []
    continuing = False
    for line in text.splitlines():
        if match := _HINT_LINE.match(line):
            hints.append([match["hint"].strip()])
            continuing = True
        elif continuing and line.startswith("    ") and line.strip():
            hints[-1].append(line.strip())
        else:
            continuing = False
    return tuple(dict.fromkeys(" ".join(parts) for parts in hints if any(parts)))


def parse_break_url(text: str) -> str | None:
    """The page torch links for a graph break ("please visit: URL"), if any."""
    match = _URL.search(text)
    return match["url"].rstrip(".") if match else None


def parse_graph_break(compile_id: str, text: str) -> GraphBreakReported:
    """Reason, kind and user stack from a ``dynamo_graph_break_reason`` payload."""
    head = text.split("\n\n", 1)[0]
    skipped = any(marker in head for marker in _SKIP_MARKERS)
    typed = _break_type_and_explanation(text)
    kind = typed[0] if typed else UNKNOWN_KIND
    if typed:
        reason = f"{typed[0]}: {typed[1]}"
    elif _REASON_MARKER in text:
        reason = text.split(_REASON_MARKER, 1)[1].split("\n", 1)[0].strip()
    else:
        reason = text.strip().split("\n", 1)[0]
    if skipped:
        reason, kind = f"{SKIPPED_FRAME_PREFIX}{reason}", SKIPPED_FRAME_KIND
    return GraphBreakReported(
        compile_id,
        reason,
        kind,
        parse_user_stack(text),
        skipped,
        hints=parse_hints(text),
        url=parse_break_url(text),
    )


def parse_guards(text: str) -> tuple[str, ...]:
    """One entry per guard of Dynamo's guard-tree text (KIND: check), managers left out."""
    guards = []
    for line in text.splitlines():
        match = _GUARD_LINE.match(line)
        if match:
            guards.append(match["guard"].split("  # ", 1)[0].strip())
    return tuple(guards)


def without_compile_id(reason: str) -> str:
    """A recompile reason without Dynamo's "0/0: " prefix."""
    return _COMPILE_ID_PREFIX.sub("", reason.strip())


def parse_recompile_reasons(payload: Any) -> tuple[str, ...]:
    items = payload if isinstance(payload, list) else [payload]
    return tuple(without_compile_id(str(item)) for item in items if item)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _first_line(value: Any) -> str | None:
    return without_compile_id(str(value)).split("\n", 1)[0] if value else None


def gave_up_silently(metrics: Mapping[str, Any]) -> bool:
    """Dynamo skipped the frame without failing, and its metrics say nothing more.

    Where torch says a frame was skipped differs by version. From 2.12 the graph-break
    artifact of a break inside a loop says so ("... which results in a skip"). Before
    2.12 (2.8.0 ``symbolic_convert.py:866``, 2.10.0 ``:905``) only a ``log.info`` does, and
    the ``SkipFrame`` is caught before any output exists: the compilation metrics carry
    no failure and no graph counts (``guard_count`` None). A frame that also reported a
    graph break was skipped for that break; one with no break ("no content in function
    call") has no graph, as on later torch.
    """
    return not metrics.get("fail_type") and metrics.get("guard_count", 0) is None


def frame_ended(compile_id: str, time_ns: int, metrics: Mapping[str, Any]) -> FrameEnded:
    """The fields we read of Dynamo's CompilationMetrics (``compilation_metrics``)."""
    start_us = metrics.get("start_time_us")
    line = metrics.get("co_firstlineno")
    return FrameEnded(
        compile_id,
        time_ns,
        start_ns=int(start_us * 1000) if start_us else None,
        function=_text(metrics.get("co_name")),
        file=_text(metrics.get("co_filename")),
        line=line if isinstance(line, int) else None,
        guard_count=int(metrics.get("guard_count") or 0),
        cache_size=_count_or_none(metrics.get("cache_size")),
        graph_op_count=int(metrics.get("graph_op_count") or 0),
        fail_type=_text(metrics.get("fail_type") or None),
        fail_reason=_text(metrics.get("fail_reason") or None),
        recompile_reason=_first_line(metrics.get("recompile_reason")),
        restart_reasons=tuple(str(r) for r in metrics.get("restart_reasons") or ()),
        cache_counts={
            key: metrics[field]
            for field, key in CACHE_COUNTERS.items()
            if isinstance(metrics.get(field), int)
        },
        timings={
            key: metrics[field] / 1e6
            for field, key in MICROSECOND_FIELDS.items()
            if isinstance(metrics.get(field), (int, float))
        },
        triton_kernel_compile_times=_text(metrics.get("triton_kernel_compile_times_us") or None),
        cudagraph_skip_reason=_text(metrics.get("cudagraph_skip_reason") or None),
        gave_up=gave_up_silently(metrics),
    )


def _count_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def cache_lookup(compile_id: str, artifact: str, payload: Any) -> CacheLookup | None:
    """A cache lookup artifact (``fx_graph_cache_bypass``, ...), or None for others."""
    for prefix, cache in CACHE_ARTIFACTS.items():
        state = artifact[len(prefix) :] if artifact.startswith(prefix) else None
        if state in CACHE_STATES:
            info = json.loads(payload) if isinstance(payload, str) else payload
            reason = info.get("cache_bypass_reason") if isinstance(info, dict) else None
            return CacheLookup(compile_id, cache, str(state), _first_line(reason))
    return None


# --- the interceptor ---------------------------------------------------------------------

MetadataFn = Callable[[], dict[str, Any]]
"""trace_structured's metadata: a dict for every event we read (torch also allows a tuple)."""


def current_compile_id() -> str | None:
    """Dynamo's compile id in progress, as "frame/attempt", or None outside a compile."""
    import torch._guards

    compile_id = torch._guards.CompileContext.current_compile_id()
    return None if compile_id is None else str(compile_id)


def current_attempt() -> int | None:
    """Dynamo's analysis attempt of the compile in progress, from 0 (a restart adds one),
    or None outside a compile."""
    import torch._guards

    trace_id = torch._guards.CompileContext.current_trace_id()
    return None if trace_id is None else int(trace_id.attempt)


def run_kind_of_graph_name(graph_name: str | None) -> str | None:
    """The compiled graph AOT Autograd is compiling, from its graph name
    ("model__0_backward_3" -> "backward"); None when it is compiling none ("model___3")."""
    match = _AOT_GRAPH_NAME_KIND.search(graph_name or "")
    return None if match is None else match.group(1)


def text_run_kind(kind: str) -> str | None:
    """Forward, backward or inference for AOT Autograd's graphs (their kind says it) and
    inductor's output code (the graph AOT Autograd is compiling when inductor writes it)."""
    if kind == names.GRAPH_TEXT_OUTPUT_CODE:
        from otel_dynamo._sources.aot import aot_graph_name

        return run_kind_of_graph_name(aot_graph_name())
    return AOT_TEXT_RUN_KINDS.get(kind)


def _on_artifact(
    recorder: StreamRecorder, compile_id: str, metadata_fn: MetadataFn, kw: dict[str, Any]
) -> None:
    name = str(metadata_fn().get("name"))
    if name.startswith(tuple(CACHE_ARTIFACTS)):
        lookup = cache_lookup(compile_id, name, kw["payload_fn"]())
        if lookup is not None:
            recorder.cache_lookup(lookup)
    elif name == "dynamo_graph_break_reason":
        recorder.graph_break(parse_graph_break(compile_id, str(kw["payload_fn"]())))
    elif name == "recompile_reasons":
        reasons = parse_recompile_reasons(kw["payload_fn"]())
        recorder.recompile(RecompileReported(compile_id, reasons))


def _on_chromium(recorder: StreamRecorder, compile_id: str, kw: dict[str, Any]) -> None:
    event = kw["payload_fn"]()
    if event.get("ph") not in ("B", "E") or event.get("name") == OUTER_PHASE:
        return
    event_id = str((event.get("args") or {}).get("compile_id") or compile_id)
    time_ns = int(float(event["ts"]) * 1000)
    begin = event["ph"] == "B"
    if event.get("name") == LAZY_BACKWARD_PHASE:
        if begin:
            recorder.lazy_backward_started(LazyBackwardStarted(event_id, time_ns))
        else:
            recorder.lazy_backward_ended(LazyBackwardEnded(event_id, time_ns))
        return
    recorder.phase(PhaseBoundary(event_id, str(event["name"]), begin, time_ns))


def interrupting_exception() -> BaseException | None:
    """A KeyboardInterrupt or SystemExit unwinding through the compile reporting its
    metrics now: Dynamo records only an ``Exception`` as a failure (``fail_type``).

    ``sys.exc_info()`` also shows an exception the user's code is handling further up
    (a compile started inside ``except KeyboardInterrupt:``): that one's traceback starts
    in a frame above the compile, so the first frame of this stack found in it must be
    torch's.
    """
    exc = sys.exc_info()[1]
    if exc is None or isinstance(exc, Exception):
        return None
    raised_through = set()
    tb = exc.__traceback__
    while tb is not None:
        raised_through.add(tb.tb_frame)
        tb = tb.tb_next
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame in raised_through:
            return exc if frame.f_code.co_filename.startswith(_torch_dir()) else None
        frame = frame.f_back
    return None


def _torch_dir() -> str:
    import torch

    return os.path.dirname(torch.__file__) + os.sep


def _on_metrics(recorder: StreamRecorder, compile_id: str, metadata_fn: MetadataFn) -> None:
    metrics = metadata_fn()
    event_id = str(metrics.get("compile_id") or compile_id)
    if not metrics.get("fail_type"):
        interrupted = interrupting_exception()
        if interrupted is not None:
            metrics = {
                **metrics,
                "fail_type": class_name(interrupted),
                "fail_reason": str(interrupted) or type(interrupted).__qualname__,
            }
    else:
        metrics = {**metrics, "fail_type": qualified_fail_type(str(metrics["fail_type"]))}
    recorder.frame_ended(frame_ended(event_id, time.time_ns(), metrics))


def qualified_fail_type(fail_type: str) -> str:
    """Dynamo's ``fail_type`` (``type(e).__qualname__``, e.g. ``Unsupported``) as the fully
    qualified class name ``error.type`` asks (``torch._dynamo.exc.Unsupported``).

    Dynamo reports its metrics while the failure unwinds through the compile, so the
    exception is ``sys.exc_info()``'s, or in its context chain where Dynamo re-raised it
    wrapped (``InternalTorchDynamoError ... from None`` keeps the original as context).
    Where none of that name is found the name stays as Dynamo gave it.
    """
    exc = sys.exc_info()[1]
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if type(exc).__qualname__ == fail_type:
            return class_name(exc)
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return fail_type


def _on_graph_text(
    recorder: StreamRecorder,
    name: str,
    compile_id: str,
    metadata_fn: MetadataFn,
    kw: dict[str, Any],
) -> None:
    """A graph's text (built only when someone reads it: torch defers it to payload_fn)."""
    wants_guards = name == "dynamo_cpp_guards_str" and recorder.wants_guard_text()
    wants_text = recorder.wants_graph_text()
    if not (wants_guards or wants_text):
        return
    text = kw["payload_fn"]()
    if not isinstance(text, str):  # torch's failure path may pass None
        return
    if wants_guards:
        recorder.guards(GuardsReported(compile_id, parse_guards(text)))
    if wants_text:
        path = None
        if name == "inductor_output_code":  # "file_path" from torch 2.9; "filename" before
            metadata = metadata_fn()
            path = metadata.get("file_path") or metadata.get("filename")
        kind = GRAPH_TEXT_EVENTS[name]
        recorder.graph_text(
            GraphTextReported(
                compile_id,
                kind,
                text,
                _text(path),
                run_kind=text_run_kind(kind),
                attempt=current_attempt(),
            )
        )


def dispatch(
    recorder: StreamRecorder,
    name: str,
    metadata_fn: MetadataFn,
    kw: dict[str, Any],
    *,
    code: CodeLocation | None = None,
    settings: CompileSettings | None = None,
) -> None:
    """Turn one trace_structured call into an event for the recorder (or ignore it);
    ``code`` and ``settings`` are the function whose frame compile is in progress and how
    it was asked for, where the router knows them."""
    if name == "chromium_event":
        _on_chromium(recorder, current_compile_id() or "", kw)
        return
    compile_id = current_compile_id()
    if compile_id is None and name != "compilation_metrics":
        return
    if name == "dynamo_start":
        recorder.frame_started(FrameStarted(compile_id or "", time.time_ns(), code, settings))
    elif name == "artifact":
        _on_artifact(recorder, compile_id or "", metadata_fn, kw)
    elif name == "compilation_metrics":
        _on_metrics(recorder, compile_id or "", metadata_fn)
    elif name in GRAPH_TEXT_EVENTS:
        _on_graph_text(recorder, name, compile_id or "", metadata_fn, kw)


_WANTED = frozenset(
    {"chromium_event", "dynamo_start", "artifact", "compilation_metrics", *GRAPH_TEXT_EVENTS}
)


TRACE_LOGGER = "torch.__trace"
"""The logger ``trace_structured`` writes each record to (``TORCH_TRACE``'s files)."""


class RecordReader(logging.Filter):
    """Reads Dynamo's events from the structured-trace records torch writes, while it
    writes them.

    With a handler on ``torch.__trace`` (``TORCH_TRACE``, tlparse's, the user's own),
    torch builds a record for every event and logs it with ``stacklevel=2`` and, outside a
    compile, with the stack of the call: a tap in that call would be named as the
    record's source and stand in its stack. So while there are handlers the tap lets
    every call through untouched (wrapt calls the original with no frame of ours), and
    this filter, on the logger itself, reads each record before any handler sees it. With
    no handler, torch writes nothing and the tap reads the calls, building only the
    payloads it needs.
    """

    def __init__(self, tap: StreamTap) -> None:
        super().__init__()
        self._tap = tap

    def filter(self, record: logging.LogRecord) -> bool:
        metadata = getattr(record, "metadata", None)
        if isinstance(metadata, dict) and metadata:
            name = next(iter(metadata))
            if name in _WANTED:
                event = metadata[name]
                payload = getattr(record, "payload", None)
                self._tap.observe(
                    name,
                    lambda: event if isinstance(event, dict) else {},
                    {"payload_fn": lambda: decoded_payload(name, event, payload)},
                )
        return True


def decoded_payload(name: str, metadata: Any, payload: Any) -> Any:
    """A record's payload as its ``payload_fn`` returned it: torch writes what is not text
    as JSON (a chromium event, a JSON-encoded artifact), and text as it is (an artifact
    said to be JSON whose value is one string: a single recompile reason)."""
    encoded = name == "chromium_event" or (
        isinstance(metadata, dict) and metadata.get("encoding") == "json"
    )
    if encoded and isinstance(payload, str):
        try:
            return json.loads(payload)
        except ValueError:
            return payload
    return payload


_BOUND_NAME = "trace_structured"
_REBOUND_IN = ("torch.",)
"""AOT Autograd's and inductor's modules bind ``trace_structured`` by name at import."""


class StreamTap:
    """Wraps ``torch._logging.trace_structured``, wherever torch bound it, and forwards to
    the original."""

    def __init__(
        self,
        get_recorder: Callable[[], StreamRecorder | None],
        get_code: Callable[[], CodeLocation | None] = lambda: None,
        get_settings: Callable[[], CompileSettings | None] = lambda: None,
    ) -> None:
        self._get_recorder = get_recorder
        self._get_code = get_code
        self._get_settings = get_settings
        self._failed_once = False
        self._trace_logger = logging.getLogger(TRACE_LOGGER)
        self._reader = RecordReader(self)

    @property
    def installed(self) -> bool:
        import torch._logging

        return patching.patched(torch._logging, _BOUND_NAME, self._tap)

    def install(self) -> None:
        import torch._logging

        original = getattr(torch._logging, _BOUND_NAME)
        tap = patching.patch(torch._logging, _BOUND_NAME, self._tap, when=self.no_records)
        if tap is not original:
            patching.rebind(original, tap, _BOUND_NAME, _REBOUND_IN)
        if self._reader not in self._trace_logger.filters:
            self._trace_logger.addFilter(self._reader)

    def no_records(self) -> bool:
        """Whether torch writes no structured-trace records now (no handler to write to):
        then the tap reads the calls, else ``RecordReader`` reads the records."""
        return not self._trace_logger.handlers

    def uninstall(self) -> None:
        import torch._logging

        tap, outermost = getattr(torch._logging, _BOUND_NAME), self.installed
        patching.unpatch(torch._logging, _BOUND_NAME, self._tap)  # or switches it off
        if outermost:
            patching.rebind(tap, tap.__wrapped__, _BOUND_NAME, _REBOUND_IN)
        self._trace_logger.removeFilter(self._reader)

    @passes_through
    def _tap(
        self,
        trace_structured: Callable[..., None],
        _instance: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> None:
        """The patched ``trace_structured(name, metadata_fn=dict, **kw)`` (wrapt's calling
        convention)."""
        name = args[0] if args else kwargs.get("name")
        if name in _WANTED:
            metadata_fn = args[1] if len(args) > 1 else kwargs.get("metadata_fn", dict)
            kw = {k: v for k, v in kwargs.items() if k not in ("name", "metadata_fn")}
            self.observe(str(name), metadata_fn, kw)
        return trace_structured(*args, **kwargs)

    def observe(self, name: str, metadata_fn: MetadataFn, kw: dict[str, Any]) -> None:
        """One event, from the tap or from ``RecordReader``, to the recorder of its compile
        (never raises: the first failure of a kind is one warning)."""
        try:
            recorder = self._get_recorder()
            if recorder is None:
                return
            if name == "dynamo_start":
                dispatch(
                    recorder,
                    name,
                    metadata_fn,
                    kw,
                    code=self._get_code(),
                    settings=self._get_settings(),
                )
            else:
                dispatch(recorder, name, metadata_fn, kw)
        except Exception:  # telemetry must never break a compile
            if not self._failed_once:
                self._failed_once = True
                _log.warning(
                    "otel_dynamo: could not read Dynamo's %r event on torch %s; events of this "
                    "shape are not recorded (the compile goes on)",
                    name,
                    torch_version(),
                    exc_info=True,
                )
