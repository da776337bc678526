"""Realistic otel_dynamo telemetry files for the report tests and the benchmark.

Files are written the way a job writes them: the OpenTelemetry SDK, one resource per
process (rank), the OTLP/JSON file exporters. Times are explicit, so every duration a
test asserts is exact. Span layout of one frame compile (Dynamo nests its phases):

    torch.compile.frame                      [0, D]
      phase entire_frame_compile             [0, D]
        phase bytecode_tracing               [0, 0.3 D]
        phase backend_compile                [0.3 D, 0.9 D], shared by the G graphs:
          torch.compile.graph                slot [a, a + L], L = 0.6 D / G
            phase create_aot_dispatcher_function   [a + L/12, a + 5L/12]
              phase aot_collect_metadata     [a + L/12, a + 3L/12]
            torch.compile.aot.forward        [a + 5L/12, a + 11L/12]
        phase build_guards                   [0.9 D, 0.95 D]
    torch.compile.run.forward (one per run, after the compile, linked to the graph)

Phase spans are named "torch.compile.phase <name>" with torch.compile.phase.name, as
the recorder writes them.
"""

from __future__ import annotations

import dataclasses
import json
import struct
import subprocess
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry._logs import LogRecord
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.trace import Link, Span, Status, StatusCode

from otel_dynamo import names
from otel_dynamo._providers.json_lines import JsonLinesSpanExporter

BASE_TIME_NS = 1_700_000_000_000_000_000
"""Start of every generated job (2023-11-14), so times in tests are exact."""

MS = 1_000_000
"""Nanoseconds per millisecond."""

MODEL_FILE = "/work/project/model.py"
TRAIN_FILE = "/work/project/train.py"
PRINT_BREAK = "Unsupported: builtin print() is not traceable"
DATA_BREAK = "Data-dependent branching on tensor.item()"


@dataclasses.dataclass(frozen=True)
class GraphBreak:
    """One graph break event on a frame span."""

    reason: str = PRINT_BREAK
    kind: str = "print"
    user_stack: tuple[str, ...] = (f"{TRAIN_FILE}:40 in main", f"{MODEL_FILE}:20 in forward")
    hints: tuple[str, ...] = ()
    url: str | None = None


@dataclasses.dataclass(frozen=True)
class FakeCompile:
    """One frame compile, as otel_dynamo records it."""

    compile_id: str
    function: str = "forward"
    file: str = MODEL_FILE
    line: int = 10
    outcome: str = names.OUTCOME_SUCCESS
    start_ms: int = 0
    duration_ms: int = 100
    graphs: int = 1
    ops_per_graph: int = 12
    guards: int = 8
    cache_size: int = 0
    recompile_reason: str | None = None
    graph_breaks: tuple[GraphBreak, ...] = ()
    error_type: str | None = None
    error_message: str | None = None
    runs: int = 0
    run_error: str | None = None
    attributes: Mapping[str, Any] = dataclasses.field(default_factory=dict)


def resource_attributes(
    *,
    rank: int | None = None,
    world_size: int | None = None,
    pid: int = 4242,
    torch_version: str | None = None,
) -> dict[str, Any]:
    """A process's resource: service, host and pid, plus the torchrun ranks and the torch
    version if any."""
    attrs: dict[str, Any] = {"service.name": "train", "host.name": "node-a", "process.pid": pid}
    if torch_version is not None:
        attrs[names.RESOURCE_TORCH_VERSION] = torch_version
    if rank is not None:
        attrs[names.RESOURCE_RANK] = rank
        attrs[names.RESOURCE_LOCAL_RANK] = rank % 8
        attrs[names.RESOURCE_WORLD_SIZE] = world_size or 1
        attrs[names.RESOURCE_NODE_RANK] = rank // 8
        attrs[names.RESOURCE_RUN_ID] = "job-1"
    return attrs


def write_traces(
    path: Path,
    compiles: Sequence[FakeCompile],
    *,
    resource: Mapping[str, Any] | None = None,
    batch: bool = False,
) -> Path:
    """Write the spans of ``compiles`` to ``path`` with the SDK and otel_dynamo's file
    writer.

    ``batch`` exports 512 spans per line (BatchSpanProcessor) instead of one.
    """
    exporter = JsonLinesSpanExporter(path.open("a", encoding="utf-8"))
    processor = (
        BatchSpanProcessor(exporter, max_export_batch_size=512, max_queue_size=1 << 20)
        if batch
        else SimpleSpanProcessor(exporter)
    )
    provider = TracerProvider(resource=Resource.create(dict(resource or resource_attributes())))
    provider.add_span_processor(processor)
    tracer = provider.get_tracer(names.INSTRUMENTATION_NAME)
    for compile_ in compiles:
        _write_compile(tracer, compile_)
    provider.shutdown()
    return path


def write_logs(
    path: Path,
    records: Sequence[Mapping[str, Any]],
    *,
    resource: Mapping[str, Any] | None = None,
) -> Path:
    """Write one log record per attribute mapping (its event name under "event.name")."""
    from otel_dynamo._providers.log_export import JsonLinesLogExporter  # 1.39's logs SDK on

    provider = LoggerProvider(resource=Resource.create(dict(resource or resource_attributes())))
    provider.add_log_record_processor(
        SimpleLogRecordProcessor(JsonLinesLogExporter(path.open("a", encoding="utf-8")))
    )
    logger = provider.get_logger(names.INSTRUMENTATION_NAME)
    for index, attributes in enumerate(records):
        logger.emit(
            LogRecord(
                timestamp=BASE_TIME_NS + index * MS,
                body=str(attributes.get("event.name", "")),
                attributes=dict(attributes),
                event_name=str(attributes.get("event.name", "")),
            )
        )
    provider.shutdown()
    return path


def job_compiles(count: int, *, diverge_at: int | None = None) -> list[FakeCompile]:
    """``count`` compiles of a training job: 200 code locations compiled up to 5 times,
    a graph break every 10th compile, one forward run each. ``diverge_at`` gives that
    compile one extra graph (a rank that traced different code)."""
    compiles = []
    for index in range(count):
        location, attempt = index % 200, index // 200
        compiles.append(
            FakeCompile(
                compile_id=f"{location}/{attempt}",
                function=f"block_{location}",
                line=10 + location,
                start_ms=index * 200,
                duration_ms=100 + (index % 7) * 10,
                graphs=2 if index == diverge_at else 1,
                cache_size=attempt,
                recompile_reason="tensor 'x' size mismatch at index 0" if attempt else None,
                graph_breaks=(GraphBreak(),) if index % 10 == 0 else (),
                runs=1,
            )
        )
    return compiles


def write_job(
    directory: Path,
    *,
    ranks: int,
    compiles_per_rank: int,
    diverging_rank: int | None = None,
    diverge_at: int = 17,
    batch: bool = False,
) -> list[Path]:
    """One traces file per rank, as ``ranks`` processes of one torchrun job write them."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for rank in range(ranks):
        compiles = job_compiles(
            compiles_per_rank, diverge_at=diverge_at if rank == diverging_rank else None
        )
        resource = resource_attributes(rank=rank, world_size=ranks, pid=1000 + rank)
        path = directory / f"traces-{1000 + rank}.jsonl"
        paths.append(write_traces(path, compiles, resource=resource, batch=batch))
    return paths


def _write_compile(tracer: trace.Tracer, compile_: FakeCompile) -> None:
    start = BASE_TIME_NS + compile_.start_ms * MS
    duration = compile_.duration_ms * MS
    frame = tracer.start_span(names.SPAN_FRAME, start_time=start, attributes=_frame_attrs(compile_))
    for index, graph_break in enumerate(compile_.graph_breaks):
        frame.add_event(names.EVENT_GRAPH_BREAK, _break_attrs(graph_break), start + index + 1)
    entire = _child(tracer, frame, _phase("entire_frame_compile"), start, 0, end=False)
    _child(tracer, entire, _phase("bytecode_tracing"), start, start + duration * 3 // 10)
    backend_start, backend_end = start + duration * 3 // 10, start + duration * 9 // 10
    backend = _child(
        tracer, entire, _phase("backend_compile"), backend_start, backend_end, end=False
    )
    graph_spans = [
        _graph(tracer, backend, compile_, index, start=start, duration=duration)
        for index in range(compile_.graphs)
    ]
    backend.end(end_time=backend_end)
    _child(
        tracer,
        entire,
        _phase("build_guards"),
        start + duration * 9 // 10,
        start + duration * 95 // 100,
    )
    entire.end(end_time=start + duration)
    if compile_.error_type is not None:
        frame.set_status(Status(StatusCode.ERROR, compile_.error_message))
    frame.end(end_time=start + duration)
    for graph in graph_spans[:1]:
        _runs(tracer, graph, compile_, start + duration)


def _frame_attrs(compile_: FakeCompile) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        names.ATTR_COMPILE_ID: compile_.compile_id,
        names.ATTR_CODE_FUNCTION: compile_.function,
        names.ATTR_CODE_FILE: compile_.file,
        names.ATTR_CODE_LINE: compile_.line,
        names.ATTR_OUTCOME: compile_.outcome,
        names.ATTR_FRAME_GRAPH_COUNT: compile_.graphs,
        names.ATTR_FRAME_CACHE_SIZE: compile_.cache_size,
        names.ATTR_GUARD_COUNT: compile_.guards,
        names.ATTR_GUARDS: [f"check_tensor(L['x'], {index})" for index in range(compile_.guards)],
        names.ATTR_GRAPH_BREAK_COUNT: len(compile_.graph_breaks),
        names.ATTR_GRAPH_BREAK_REASONS: [
            graph_break.reason for graph_break in compile_.graph_breaks
        ],
    }
    if compile_.recompile_reason is not None:
        attrs[names.ATTR_RECOMPILE_REASON] = compile_.recompile_reason
    if compile_.error_type is not None:
        attrs[names.ATTR_ERROR_TYPE] = compile_.error_type
        attrs[names.ATTR_ERROR_MESSAGE] = compile_.error_message or ""
    return {**attrs, **compile_.attributes}


def _break_attrs(graph_break: GraphBreak) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        names.ATTR_GRAPH_BREAK_REASON: graph_break.reason,
        names.ATTR_GRAPH_BREAK_KIND: graph_break.kind,
        names.ATTR_GRAPH_BREAK_USER_STACK: list(graph_break.user_stack),
    }
    if graph_break.hints:
        attrs[names.ATTR_GRAPH_BREAK_HINTS] = list(graph_break.hints)
    if graph_break.url:
        attrs[names.ATTR_GRAPH_BREAK_URL] = graph_break.url
    return attrs


def _phase(name: str) -> tuple[str, dict[str, Any]]:
    # The recorder names phase spans "torch.compile.phase <name>".
    return f"{names.SPAN_PHASE} {name}", {names.ATTR_PHASE_NAME: name}


def _child(
    tracer: trace.Tracer,
    parent: Span,
    kind: tuple[str, dict[str, Any]],
    start: int,
    end_ns: int,
    *,
    end: bool = True,
) -> Span:
    name, attributes = kind
    context = trace.set_span_in_context(parent)
    span = tracer.start_span(name, context=context, start_time=start, attributes=attributes)
    if end:
        span.end(end_time=end_ns)
    return span


def _graph(
    tracer: trace.Tracer,
    parent: Span,
    compile_: FakeCompile,
    index: int,
    *,
    start: int,
    duration: int,
) -> Span:
    """Graph ``index`` in its share of the backend window, with its AOT phase and compile."""
    attributes = {
        names.ATTR_COMPILE_ID: compile_.compile_id,
        names.ATTR_BACKEND: "inductor",
        names.ATTR_GRAPH_INDEX: index,
        names.ATTR_GRAPH_OP_COUNT: compile_.ops_per_graph,
        names.ATTR_GRAPH_NODE_COUNT: compile_.ops_per_graph + 3,
        names.ATTR_GRAPH_OPS: [f"aten.relu={compile_.ops_per_graph}"],
        names.ATTR_GRAPH_INPUT_COUNT: 2,
    }
    slot = duration * 6 // (10 * compile_.graphs)
    begin = start + duration * 3 // 10 + index * slot
    graph = _child(tracer, parent, (names.SPAN_GRAPH, attributes), begin, 0, end=False)
    aot_start, aot_end = begin + slot // 12, begin + slot * 5 // 12
    aot = _child(tracer, graph, _phase("create_aot_dispatcher_function"), aot_start, 0, end=False)
    # Nested inside the AOT phase, as Dynamo records it: must not count twice.
    _child(tracer, aot, _phase("aot_collect_metadata"), aot_start, begin + slot * 3 // 12)
    aot.end(end_time=aot_end)
    forward = (names.SPAN_AOT_FORWARD, {names.ATTR_AOT_GRAPH_NAME: _graph_name(compile_)})
    _child(tracer, graph, forward, aot_end, begin + slot * 11 // 12)
    graph.end(end_time=begin + slot)
    return graph


def _runs(tracer: trace.Tracer, graph: Span, compile_: FakeCompile, after: int) -> None:
    for index in range(compile_.runs):
        start = after + (index + 1) * 2 * MS
        span = tracer.start_span(
            names.SPAN_RUN_FORWARD,
            context=trace.set_span_in_context(trace.INVALID_SPAN),
            links=[Link(graph.get_span_context())],
            start_time=start,
            attributes={
                names.ATTR_COMPILE_ID: compile_.compile_id,
                names.ATTR_AOT_GRAPH_NAME: _graph_name(compile_),
                names.ATTR_RUN_INDEX: index + 1,
            },
        )
        if compile_.run_error is not None and index == compile_.runs - 1:
            span.set_attribute(names.ATTR_ERROR_TYPE, compile_.run_error)
            span.set_status(Status(StatusCode.ERROR, "run failed"))
        span.end(end_time=start + MS)


def _graph_name(compile_: FakeCompile) -> str:
    return f"{compile_.function}__{compile_.compile_id.replace('/', '_')}_forward"


def request_line(*spans: Mapping[str, Any], resource: Mapping[str, Any] | None = None) -> str:
    """One hand-made OTLP/JSON trace export request holding ``spans``, as a line."""
    request = {
        "resourceSpans": [
            {
                "resource": dict(resource or {"attributes": []}),
                "scopeSpans": [{"scope": {"name": "x"}, "spans": [dict(span) for span in spans]}],
            }
        ]
    }
    return json.dumps(request) + "\n"


def string_attribute(key: str, value: str) -> dict[str, Any]:
    """An OTLP/JSON KeyValue with a string value."""
    return {"key": key, "value": {"stringValue": value}}


# --- scenarios shared by several test modules ----------------------------------------

DTYPE_REASON = "tensor 'x' dtype mismatch. expected Float, actual Half"
BACKEND_ERROR = "torch._dynamo.exc.BackendCompilerFailed"


def small_compiles() -> list[FakeCompile]:
    """One process: a compile with a graph break, its recompile, a failure, a no_graph."""
    return [
        FakeCompile("0/0", graph_breaks=(GraphBreak(),), runs=2),
        FakeCompile(
            "0/1",
            start_ms=1000,
            duration_ms=200,
            graphs=2,
            guards=9,
            cache_size=1,
            recompile_reason=DTYPE_REASON,
        ),
        FakeCompile(
            "1/0",
            function="helper",
            file="/work/project/utils.py",
            line=5,
            outcome=names.OUTCOME_FAILURE,
            start_ms=2000,
            duration_ms=50,
            graphs=0,
            guards=0,
            error_type=BACKEND_ERROR,
            error_message="backend='inductor' raised: boom",
        ),
        FakeCompile(
            "2/0",
            function="step",
            line=30,
            outcome=names.OUTCOME_NO_GRAPH,
            start_ms=3000,
            duration_ms=10,
            graphs=0,
            guards=2,
            graph_breaks=(
                GraphBreak(DATA_BREAK, "data_dependent", (f"{MODEL_FILE}:33 in step",)),
                GraphBreak(),
            ),
        ),
    ]


def write_small(directory: Path) -> Path:
    """``small_compiles()`` as one process's traces file in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    return write_traces(directory / "traces-4242.jsonl", small_compiles())


# --- PNG ----------------------------------------------------------------------------


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB rows of an 8-bit RGB or RGBA PNG (as Chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    header, idat, pos = b"", [], 8
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        header = chunk if kind == b"IHDR" else header
        idat += [chunk] if kind == b"IDAT" else []
        pos += 12 + length
    width, height, _depth, color_type = struct.unpack(">IIBB", header[:10])
    channels = {2: 3, 6: 4}[color_type]
    rows = _unfilter(zlib.decompress(b"".join(idat)), width * channels, height, channels)
    return width, height, [_rgb(row, channels) for row in rows]


def _unfilter(raw: bytes, stride: int, height: int, bpp: int) -> list[bytes]:
    rows, previous = [], bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, previous, strict=True))
        elif kind in (1, 3, 4):
            _unfilter_line(kind, line, previous, bpp)
        rows.append(bytes(line))
        previous = line
    return rows


def _unfilter_line(kind: int, line: bytearray, previous: bytes, bpp: int) -> None:
    for i in range(len(line)):
        left = line[i - bpp] if i >= bpp else 0
        up, up_left = previous[i], previous[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + left) & 255
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 255
        else:
            guess = left + up - up_left
            gaps = abs(guess - left), abs(guess - up), abs(guess - up_left)
            pick = (
                left
                if gaps[0] <= gaps[1] and gaps[0] <= gaps[2]
                else up
                if gaps[1] <= gaps[2]
                else up_left
            )
            line[i] = (line[i] + pick) & 255


def _rgb(row: bytes, channels: int) -> bytes:
    if channels == 3:
        return row
    return bytes(value for index, value in enumerate(row) if index % 4 != 3)


def count_color(rows: list[bytes], rgb: tuple[int, int, int]) -> int:
    """How many pixels have exactly the colour ``rgb``."""
    target = bytes(rgb)
    return sum(1 for row in rows for x in range(0, len(row), 3) if row[x : x + 3] == target)


# --- headless Chromium ------------------------------------------------------------

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def run_chromium(
    executable: str, user_data_dir: Path, url: str, *extra: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium once on ``url`` with an empty profile (no network needed)."""
    command = [executable, *CHROMIUM_FLAGS, f"--user-data-dir={user_data_dir}", *extra, url]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
