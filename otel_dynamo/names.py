"""Every name otel_dynamo emits: span names, attribute keys, metric names, log events.

This module is the single source of truth. Code, the tables of docs/names.md, the Grafana
dashboards and the Collector configs all refer to these constants; tests check that
each one is documented and that nothing downstream uses a name that is not here.
"""

from __future__ import annotations

from typing import NamedTuple

# Kept by docs/generate_names.py: every string constant below, in its group; a new one
# joins the group of the constant defined before it.
__all__ = [  # noqa: RUF022 - grouped by kind, not sorted
    # span names
    "SPAN_FRAME",
    "SPAN_PHASE",
    "SPAN_LAZY_BACKWARD",
    "SPAN_GRAPH",
    "SPAN_AOT_PARTITION",
    "SPAN_AOT_FORWARD",
    "SPAN_AOT_BACKWARD",
    "SPAN_AOT_INFERENCE",
    "SPAN_RUN_FORWARD",
    "SPAN_RUN_BACKWARD",
    "SPAN_RUN_INFERENCE",
    "EVENT_GRAPH_BREAK",
    "SPAN_EXPORT",
    "SPAN_EXPORT_DECOMPOSITIONS",
    "SPAN_EXPORT_RUN",
    # attribute keys
    "ATTR_COMPILE_ID",
    "ATTR_COMPILE_ATTEMPT",
    "ATTR_CODE_FUNCTION",
    "ATTR_CODE_FILE",
    "ATTR_CODE_LINE",
    "ATTR_COMPILE_MODULE_CLASS",
    "ATTR_CODE_ARGUMENTS",
    "ATTR_COMPILE_MODE",
    "ATTR_COMPILE_OPTIONS",
    "ATTR_COMPILE_DYNAMIC",
    "ATTR_COMPILE_FULLGRAPH",
    "ATTR_THREAD_ID",
    "ATTR_THREAD_NAME",
    "ATTR_OUTCOME",
    "ATTR_FRAME_OUTCOME",
    "ATTR_FRAME_GRAPH_COUNT",
    "ATTR_FRAME_CACHE_SIZE",
    "ATTR_FRAME_RESTART_REASONS",
    "ATTR_FRAME_FAIL_REASON",
    "ATTR_CACHE_AOT_HITS",
    "ATTR_CACHE_AOT_MISSES",
    "ATTR_CACHE_FX_HITS",
    "ATTR_CACHE_FX_MISSES",
    "ATTR_CACHE_FX_BYPASSES",
    "ATTR_CACHE_AOT_BYPASSES",
    "ATTR_CACHE_FX_REMOTE_HITS",
    "ATTR_CACHE_FX_REMOTE_MISSES",
    "ATTR_CACHE_AOT_REMOTE_HITS",
    "ATTR_CACHE_AOT_REMOTE_MISSES",
    "ATTR_CACHE_FX_STATE",
    "ATTR_CACHE_AOT_STATE",
    "ATTR_CACHE_BYPASS_REASON",
    "ATTR_GUARD_LATENCY",
    "ATTR_TRITON_COMPILE_TIME",
    "ATTR_TRITON_KERNEL_COMPILE_TIMES",
    "ATTR_GUARD_COUNT",
    "ATTR_GUARDS",
    "ATTR_GRAPH_TEXT_KIND",
    "ATTR_GRAPH_TEXT",
    "ATTR_GRAPH_TEXT_LENGTH",
    "ATTR_GRAPH_TEXT_TRUNCATED",
    "ATTR_GRAPH_TEXT_MAX_LENGTH",
    "ATTR_GRAPH_TEXT_PATH",
    "ATTR_RECOMPILE_REASON",
    "ATTR_GRAPH_BREAK_COUNT",
    "ATTR_GRAPH_BREAK_REASONS",
    "ATTR_GRAPH_BREAK_REASON",
    "ATTR_GRAPH_BREAK_USER_STACK",
    "ATTR_GRAPH_BREAK_KIND",
    "ATTR_GRAPH_BREAK_HINTS",
    "ATTR_GRAPH_BREAK_URL",
    "ATTR_FIX_SUMMARY",
    "ATTR_PHASE_NAME",
    "ATTR_TIME_PREFIX",
    "ATTR_DISCARDED",
    "ATTR_DISCARDED_BY",
    "ATTR_FRAME_DISCARDED_GRAPH_COUNT",
    "ATTR_COMPILE_KIND",
    "ATTR_TIME_CATEGORY",
    "ATTR_BACKEND",
    "ATTR_GRAPH_INDEX",
    "ATTR_GRAPH_OP_COUNT",
    "ATTR_GRAPH_NODE_COUNT",
    "ATTR_GRAPH_OPS",
    "ATTR_GRAPH_CALL_FUNCTION_COUNT",
    "ATTR_GRAPH_CALL_FUNCTION_OPS",
    "ATTR_GRAPH_INPUT_COUNT",
    "ATTR_GRAPH_INPUT_SHAPES",
    "ATTR_GRAPH_INPUT_DTYPES",
    "ATTR_GRAPH_INPUT_DEVICES",
    "ATTR_AOT_PARTITIONER",
    "ATTR_AOT_JOINT_NODE_COUNT",
    "ATTR_AOT_FORWARD_NODE_COUNT",
    "ATTR_AOT_BACKWARD_NODE_COUNT",
    "ATTR_AOT_SAVED_TENSOR_COUNT",
    "ATTR_AOT_GRAPH_NAME",
    "ATTR_AOT_NODE_COUNT",
    "ATTR_AOT_OP_COUNT",
    "ATTR_AOT_COMPILER",
    "ATTR_RUN_KIND",
    "ATTR_RUN_INDEX",
    "ATTR_RUN_DEVICE",
    "ATTR_RUN_DEVICE_DURATION",
    "ATTR_RUN_DEVICE_DROP_REASON",
    "ATTR_CUDAGRAPH_DECISION",
    "ATTR_CUDAGRAPH_SKIP_REASON",
    "ATTR_CUDAGRAPH_SKIP_CATEGORY",
    "ATTR_CUDAGRAPH_PARTITIONS",
    "ATTR_CUDAGRAPH_AT",
    "ATTR_CACHE_NAME",
    "ATTR_CACHE_STATE",
    "ATTR_VARIANT_CALLS",
    "ATTR_ERROR_TYPE",
    "ATTR_ERROR_MESSAGE",
    "ATTR_EXPORT_MODULE_CLASS",
    "ATTR_EXPORT_STRICT",
    "ATTR_EXPORT_DYNAMIC_SHAPES",
    "ATTR_EXPORT_OP_COUNT",
    "ATTR_EXPORT_NODE_COUNT",
    "ATTR_EXPORT_OPS",
    "ATTR_EXPORT_PARAMETER_COUNT",
    "ATTR_EXPORT_BUFFER_COUNT",
    "ATTR_EXPORT_CONSTANT_COUNT",
    "ATTR_EXPORT_USER_INPUT_COUNT",
    "ATTR_EXPORT_USER_OUTPUT_COUNT",
    "ATTR_EXPORT_BUFFER_MUTATION_COUNT",
    "ATTR_EXPORT_USER_INPUT_MUTATION_COUNT",
    "ATTR_EXPORT_RANGE_CONSTRAINT_COUNT",
    "ATTR_EXPORT_DECOMP_OP_COUNT_BEFORE",
    "ATTR_EXPORT_DECOMP_OP_COUNT_AFTER",
    "ATTR_EXPORT_DECOMP_OPS_ADDED",
    "ATTR_EXPORT_DECOMP_OPS_REMOVED",
    "ATTR_EXPORT_DECOMP_TABLE_SIZE",
    "ATTR_EXPORT_DECOMP_DEFAULT_TABLE",
    "ATTR_EXPORT_ERROR_MESSAGE",
    "ATTR_EXPORT_ERROR_KIND",
    "ATTR_EXPORT_ERROR_CLASSIFIED",
    "ATTR_EXPORT_ERROR_CASE",
    "ATTR_EXPORT_OPERATION",
    "ATTR_EXPORT_OUTCOME",
    # values
    "OUTCOME_SUCCESS",
    "OUTCOME_FAILURE",
    "OUTCOME_SKIPPED",
    "OUTCOME_NO_GRAPH",
    "OUTCOME_INTERRUPTED",
    "CUDAGRAPH_GRAPHED",
    "CUDAGRAPH_SKIPPED",
    "CUDAGRAPH_AT_COMPILE",
    "CUDAGRAPH_AT_RUN",
    "CACHE_INDUCTOR_FX",
    "CACHE_AOT_AUTOGRAD",
    "CACHE_HIT",
    "CACHE_MISS",
    "CACHE_BYPASS",
    "DROP_PENDING_LIMIT",
    "DROP_PROCESS_EXIT",
    "DROP_STREAM_CAPTURING",
    "DROP_DEVICE_ERROR",
    "GRAPH_TEXT_DYNAMO",
    "GRAPH_TEXT_AOT_JOINT",
    "GRAPH_TEXT_AOT_FORWARD",
    "GRAPH_TEXT_AOT_BACKWARD",
    "GRAPH_TEXT_AOT_INFERENCE",
    "GRAPH_TEXT_OUTPUT_CODE",
    "GRAPH_TEXT_GUARDS",
    "COMPILE_KIND_FRAME",
    "COMPILE_KIND_LAZY_BACKWARD",
    "TIME_TRACING",
    "TIME_AOT_JOINT_GRAPH",
    "TIME_AOT_PARTITION",
    "TIME_AOT_OTHER",
    "TIME_BACKEND_LOWERING",
    "TIME_BACKEND_CODEGEN",
    "TIME_BACKEND_COMPILE",
    "TIME_BACKEND_AUTOTUNE",
    "TIME_BACKEND_OTHER",
    "TIME_GUARDS",
    "TIME_CACHE",
    "TIME_CACHE_LOAD",
    "TIME_OTHER",
    "COMPILE_MODE_DEFAULT",
    "RUN_KIND_FORWARD",
    "RUN_KIND_BACKWARD",
    "RUN_KIND_INFERENCE",
    "RUN_KIND_EXPORT",
    "EXPORT_OPERATION_EXPORT",
    "EXPORT_OPERATION_DECOMPOSITIONS",
    "CUDAGRAPH_CATEGORY_CPU_DEVICE",
    # metrics
    "METRIC_COMPILES",
    "METRIC_COMPILE_DURATION",
    "METRIC_COMPILE_TIME",
    "METRIC_GRAPHS",
    "METRIC_GRAPH_BREAKS",
    "METRIC_RECOMPILES",
    "METRIC_GUARDS",
    "METRIC_CACHE_ENTRIES",
    "METRIC_RUNS",
    "METRIC_RUN_DURATION",
    "METRIC_RUN_DEVICE_DURATION",
    "METRIC_RUN_DEVICE_DROPPED",
    "METRIC_CUDAGRAPH_GRAPHS",
    "METRIC_CACHE_LOOKUPS",
    "METRIC_VARIANT_CALLS",
    "METRIC_FAILURES",
    "METRIC_FAULTS",
    "METRIC_EXPORTS",
    "METRIC_EXPORT_DURATION",
    "ATTR_STAGE",
    "ATTR_FAULT_KIND",
    "ATTR_FAULT_TARGET",
    "ATTR_ACCURACY_PASSED",
    "ATTR_ACCURACY_MAX_ABS_ERROR",
    "ATTR_ACCURACY_MAX_REL_ERROR",
    "ATTR_ACCURACY_TOLERANCE",
    "ATTR_REPRO_PATH",
    # log events
    "LOG_FRAME_COMPILED",
    "LOG_GRAPH_COMPILED",
    "LOG_CUDAGRAPH_SKIPPED",
    "LOG_CACHE_BYPASSED",
    "LOG_VARIANT_CALLS",
    "LOG_GRAPH_BREAK",
    "LOG_RECOMPILE",
    "LOG_COMPILE_FAILED",
    "LOG_RUN_FAILED",
    "LOG_FAULT_INJECTED",
    "LOG_ACCURACY_CHECKED",
    "LOG_REPRO_WRITTEN",
    "LOG_STILL_COMPILING",
    "LOG_GRAPH_TEXT",
    "LOG_CONFIG_PROBLEM",
    "LOG_EXPORTED",
    "LOG_EXPORT_FAILED",
    "LOG_DECOMPOSED",
    "LOG_DECOMPOSITION_FAILED",
    # resource attributes
    "RESOURCE_RANK",
    "RESOURCE_LOCAL_RANK",
    "RESOURCE_WORLD_SIZE",
    "RESOURCE_NODE_RANK",
    "RESOURCE_RUN_ID",
    "RESOURCE_TORCH_VERSION",
    "RESOURCE_SERVICE_NAME",
    "RESOURCE_SERVICE_INSTANCE_ID",
    "RESOURCE_HOST_NAME",
    "RESOURCE_PROCESS_PID",
    # instrumentation scope
    "INSTRUMENTATION_NAME",
    "SCHEMA_URL",
    # log event attributes
    "ATTR_COMPILE_ELAPSED",
]

# --- span names -------------------------------------------------------------------

SPAN_FRAME = "torch.compile.frame"
"""One Dynamo frame compile (one compile id), from compile start to end."""

SPAN_PHASE = "torch.compile.phase"
"""A phase of Dynamo's own compile timing (bytecode_tracing, backend_compile, ...)."""

SPAN_LAZY_BACKWARD = "torch.compile.lazy_backward"
"""A backward graph compiled lazily, at the first ``.backward()`` after its frame compiled;
a child of that frame's span, though it starts after the frame span ends."""

SPAN_GRAPH = "torch.compile.graph"
"""One call of the backend on one FX graph."""

SPAN_AOT_PARTITION = "torch.compile.aot.partition"
"""AOT Autograd's partitioner splitting the joint graph into forward and backward."""

SPAN_AOT_FORWARD = "torch.compile.aot.forward"
"""The inner compiler called on the forward graph."""

SPAN_AOT_BACKWARD = "torch.compile.aot.backward"
"""The inner compiler called on the backward graph (often lazily, at the first backward)."""

SPAN_AOT_INFERENCE = "torch.compile.aot.inference"
"""The inner compiler called on an inference (no-grad) graph."""

SPAN_RUN_FORWARD = "torch.compile.run.forward"
"""One execution of a compiled forward graph."""

SPAN_RUN_BACKWARD = "torch.compile.run.backward"
"""One execution of a compiled backward graph."""

SPAN_RUN_INFERENCE = "torch.compile.run.inference"
"""One execution of a compiled inference graph."""

EVENT_GRAPH_BREAK = "torch.compile.graph_break"
"""Span event on the frame span for each graph break Dynamo reported."""

SPAN_EXPORT = "torch.export.export"
"""One call of torch.export.export (strict or not), from call to return or raise."""

SPAN_EXPORT_DECOMPOSITIONS = "torch.export.run_decompositions"
"""One call of ExportedProgram.run_decompositions."""

SPAN_EXPORT_RUN = "torch.export.run"
"""One execution of a module made by ExportedProgram.module() (run-span policy applies)."""

# --- attribute keys: frame ----------------------------------------------------------

ATTR_COMPILE_ID = "torch.compile.id"
"""Dynamo's compile id as a string, "frame/attempt" (e.g. "0/1")."""

ATTR_COMPILE_ATTEMPT = "torch.compile.attempt"
"""On a `torch.compile.graph_text` log event: Dynamo's analysis attempt within the compile
that made the text, from 0. Each restart of the analysis (a graph break found late, a
float that stops being specialized) starts the next attempt: a text from an attempt
before the compile's last one belongs to work Dynamo threw away."""

ATTR_CODE_FUNCTION = "code.function.name"
"""Name of the Python function whose frame Dynamo compiled."""

ATTR_CODE_FILE = "code.file.path"
"""Source file of the compiled frame."""

ATTR_CODE_LINE = "code.line.number"
"""First line of the compiled frame's code object."""

ATTR_CODE_ARGUMENTS = "torch.compile.code.arguments"
"""On a frame span: the compiled function's parameters, in order (``self`` included):
where an argument's position is needed (a ``mark_dynamic`` fix)."""

ATTR_COMPILE_MODULE_CLASS = "torch.compile.module.class"
"""Qualified class name of the ``torch.nn.Module`` whose method the compiled frame runs
(the frame's first argument, ``self``), e.g.
"transformers.models.opt.modeling_opt.OPTForCausalLM": ``torch.compile(model)`` compiles
the frame of ``model.forward``, or of a decorator's wrapper standing for it (whose code
name, ``code.function.name``, is then the wrapper's). Absent for a frame whose first
argument is no module."""

ATTR_COMPILE_MODE = "torch.compile.mode"
"""On a frame span: the ``mode`` the frame was compiled with, as given to
``torch.compile`` ("default", "reduce-overhead", "max-autotune-no-cudagraphs", ...). For
inductor, which keeps only the options a mode stands for, the mode whose options those
are (options given by hand that equal a mode's read as that mode). Absent when the frame
was compiled without ``torch.compile`` (``torch._dynamo.optimize``)."""

ATTR_COMPILE_OPTIONS = "torch.compile.options"
"""On a frame span: the ``options`` given to ``torch.compile`` beyond its mode, as JSON
with sorted keys (a value JSON cannot hold is written as its type's name); absent when
none were given. Secrets in it are redacted as in every exported string."""

ATTR_COMPILE_DYNAMIC = "torch.compile.dynamic"
"""On a frame span: ``dynamic`` as given to ``torch.compile`` (true or false); absent
when it was not given (torch then marks dimensions dynamic after they change)."""

ATTR_COMPILE_FULLGRAPH = "torch.compile.fullgraph"
"""On a frame span: whether the frame was compiled with ``fullgraph=True`` (a graph break
is then an error)."""

ATTR_THREAD_ID = "thread.id"
"""The OS thread id (``threading.get_native_id``) of the thread that compiled (frame and
lazy backward spans): one track per thread in ``otel-dynamo report --perfetto``."""

ATTR_THREAD_NAME = "thread.name"
"""The Python name of that thread (``MainThread``, a DataLoader or user thread)."""

ATTR_OUTCOME = "torch.compile.outcome"
"""How a compile ended: success, no_graph, skipped, failure or interrupted. On frame spans
and their ``torch.compile.frame_compiled`` log events, on a lazy backward span a signal
interrupted, and on the compile metrics (``torch.compile.compiles``,
``torch.compile.compile.duration``, where a lazy backward compile counts as success)."""

ATTR_FRAME_OUTCOME = ATTR_OUTCOME
"""Deprecated alias of ``ATTR_OUTCOME``, kept for code that imports it; its value is the
new key. Files written before the rename carry the old key (``LEGACY_ATTRIBUTES``)."""

ATTR_FRAME_GRAPH_COUNT = "torch.compile.frame.graph.count"
"""Number of graphs handed to the backend while compiling this frame."""

ATTR_FRAME_CACHE_SIZE = "torch.compile.frame.cache_size"
"""Number of cache entries Dynamo already held for this code object (recompile pressure)."""

ATTR_FRAME_RESTART_REASONS = "torch.compile.frame.restart_reasons"
"""Reasons Dynamo restarted analysis of this frame (control flow, not failures)."""

ATTR_FRAME_FAIL_REASON = "torch.compile.frame.fail_reason"
"""Dynamo's own failure reason when the frame compile failed."""

ATTR_CACHE_AOT_HITS = "torch.compile.cache.aot_autograd.hit_count"
"""AOT Autograd local cache hits during the frame compile (compilers not called on a hit)."""

ATTR_CACHE_AOT_MISSES = "torch.compile.cache.aot_autograd.miss_count"
"""AOT Autograd local cache misses during the frame compile."""

ATTR_CACHE_FX_HITS = "torch.compile.cache.inductor_fx.hit_count"
"""Inductor FX graph cache hits during the frame compile."""

ATTR_CACHE_FX_MISSES = "torch.compile.cache.inductor_fx.miss_count"
"""Inductor FX graph cache misses during the frame compile."""

ATTR_CACHE_FX_BYPASSES = "torch.compile.cache.inductor_fx.bypass_count"
"""Inductor FX graph cache bypasses (the graph was compiled and not cached) during the
compile, one per ``fx_graph_cache_bypass`` artifact torch wrote."""

ATTR_CACHE_AOT_BYPASSES = "torch.compile.cache.aot_autograd.bypass_count"
"""AOT Autograd cache bypasses during the compile (``aotautograd_cache_bypass``)."""

ATTR_CACHE_FX_REMOTE_HITS = "torch.compile.cache.inductor_fx.remote_hit_count"
"""Inductor FX graph remote cache hits during the compile (where the torch has them)."""

ATTR_CACHE_FX_REMOTE_MISSES = "torch.compile.cache.inductor_fx.remote_miss_count"
"""Inductor FX graph remote cache misses during the compile."""

ATTR_CACHE_AOT_REMOTE_HITS = "torch.compile.cache.aot_autograd.remote_hit_count"
"""AOT Autograd remote cache hits during the compile."""

ATTR_CACHE_AOT_REMOTE_MISSES = "torch.compile.cache.aot_autograd.remote_miss_count"
"""AOT Autograd remote cache misses during the compile."""

ATTR_CACHE_FX_STATE = "torch.compile.cache.inductor_fx.state"
"""hit, miss or bypass: the FX graph cache lookup of the graph this compile step compiled."""

ATTR_CACHE_AOT_STATE = "torch.compile.cache.aot_autograd.state"
"""hit, miss or bypass: the AOT Autograd cache lookup of the graph this compile step compiled."""

ATTR_CACHE_BYPASS_REASON = "torch.compile.cache.bypass_reason"
"""Why a cache was bypassed, as torch states it (``cache_bypass_reason``)."""

ATTR_GUARD_LATENCY = "torch.compile.guard.latency"
"""Seconds Dynamo measured for one evaluation of the frame's guards (``guard_latency_us``)."""

ATTR_TRITON_COMPILE_TIME = "torch.compile.triton.compile_time"
"""Seconds spent compiling Triton kernels during the compile (``triton_compile_time_us``)."""

ATTR_TRITON_KERNEL_COMPILE_TIMES = "torch.compile.triton.kernel_compile_times"
"""Per-kernel Triton compile times as torch reports them (``triton_kernel_compile_times_us``,
length-capped text)."""

ATTR_GUARD_COUNT = "torch.compile.guard.count"
"""Number of guards Dynamo installed for the frame."""

ATTR_GUARDS = "torch.compile.guards"
"""Guard descriptions (string array, length-capped); only with `OTEL_DYNAMO_CAPTURE`
including `guards`."""

ATTR_GRAPH_TEXT_KIND = "torch.compile.graph_text.kind"
"""Which text a `torch.compile.graph_text` log event carries (one of `GRAPH_TEXT_KINDS`)."""

ATTR_GRAPH_TEXT = "torch.compile.graph_text.text"
"""The text itself, as torch's structured trace has it (capped at
`OTEL_DYNAMO_MAX_GRAPH_TEXT_LENGTH`; without `stacks`, no `# File:` source lines)."""

ATTR_GRAPH_TEXT_LENGTH = "torch.compile.graph_text.length"
"""Characters of the text before any cap."""

ATTR_GRAPH_TEXT_TRUNCATED = "torch.compile.graph_text.truncated"
"""True when the text was cut at the cap (its end is then `…`)."""

ATTR_GRAPH_TEXT_MAX_LENGTH = "torch.compile.graph_text.max_length"
"""The cap in force (`OTEL_DYNAMO_MAX_GRAPH_TEXT_LENGTH`)."""

ATTR_GRAPH_TEXT_PATH = "torch.compile.graph_text.path"
"""Inductor's output code: the file inductor wrote it to (its code cache)."""

ATTR_RECOMPILE_REASON = "torch.compile.recompile.reason"
"""On recompiles only: the guard that failed, e.g. "tensor 'x' dtype mismatch. ..."."""

ATTR_GRAPH_BREAK_COUNT = "torch.compile.graph_break.count"
"""Number of graph breaks Dynamo reported while compiling the frame."""

ATTR_GRAPH_BREAK_REASONS = "torch.compile.graph_break.reasons"
"""Graph-break reasons of the frame (string array)."""

ATTR_GRAPH_BREAK_REASON = "torch.compile.graph_break.reason"
"""On a graph span or break event: why the graph ended in a graph break."""

ATTR_GRAPH_BREAK_USER_STACK = "torch.compile.graph_break.user_stack"
"""User stack of a graph break, as "file:line in function" strings, innermost last."""

ATTR_GRAPH_BREAK_KIND = "torch.compile.graph_break.kind"
"""Dynamo's class of a graph break, its ``gb_type`` (e.g. "Failed to trace builtin
operator", "Data-dependent branching"; before torch 2.12 the reason's first line), or
"skip" for a frame Dynamo gave up on."""

ATTR_GRAPH_BREAK_HINTS = "torch.compile.graph_break.hints"
"""On a break event: torch's own hints for this break, as it stated them (its ``Hint:``
lines, e.g. "Use `torch.cond` to express dynamic control flow."), in its order; absent
where torch gave none. torch's text: it names types, functions and config settings, never
the job's values."""

ATTR_GRAPH_BREAK_URL = "torch.compile.graph_break.url"
"""On a break event: the page torch links for this kind of break (its graph-break
registry, e.g. https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html);
absent where torch links none."""

ATTR_FIX_SUMMARY = "torch.compile.fix.summary"
"""What to do about a recompile or a graph break, in one sentence with the job's own names
(e.g. "mark dimension 0 of x dynamic before each call of f (job.py:3): ..."): on the
frame span and log event of a recompile, on each graph-break event. The report's
``--json`` carries the whole fix record (docs/report-json.md)."""

ATTR_PHASE_NAME = "torch.compile.phase.name"
"""Dynamo's own name of a compile phase (bytecode_tracing, backend_compile, ...)."""

ATTR_TIME_PREFIX = "torch.compile.time."
"""Prefix of a frame or lazy-backward span's seconds per category (``TIME_*``), e.g.
``torch.compile.time.backend.codegen``; the categories add up to the span's duration."""

ATTR_DISCARDED = "torch.compile.discarded"
"""True on a graph or AOT span whose work Dynamo threw away by restarting the analysis."""

ATTR_DISCARDED_BY = "torch.compile.discarded_by"
"""The restart that discarded it, fully qualified (e.g.
"torch._dynamo.exc.TensorifyScalarRestartAnalysis")."""

ATTR_FRAME_DISCARDED_GRAPH_COUNT = "torch.compile.frame.discarded_graph_count"
"""Graphs handed to the backend and then thrown away by a restart (not in graph_count)."""

ATTR_COMPILE_KIND = "torch.compile.compile.kind"
"""On compile-duration metrics: "frame" (a frame compile) or "lazy_backward"."""

ATTR_TIME_CATEGORY = "torch.compile.time.category"
"""On the compile-time metric: the category (``TIME_*``) the seconds were spent in."""

# --- attribute keys: graph ----------------------------------------------------------

ATTR_BACKEND = "torch.compile.backend"
"""Name of the wrapped backend (e.g. "inductor", "aot_eager", a callable's __name__)."""

ATTR_GRAPH_INDEX = "torch.compile.graph.index"
"""Position of this graph among the graphs of its frame compile, from 0."""

ATTR_GRAPH_OP_COUNT = "torch.compile.graph.op_count"
"""Dynamo's op count: call_function + call_method + call_module nodes."""

ATTR_GRAPH_NODE_COUNT = "torch.compile.graph.node_count"
"""All FX nodes of the graph, placeholders and output included."""

ATTR_GRAPH_OPS = "torch.compile.graph.ops"
"""Most frequent op targets as "target=count" strings, most frequent first."""

ATTR_GRAPH_CALL_FUNCTION_COUNT = "torch.compile.graph.call_function_count"
"""call_function nodes of the graph only: torch._dynamo.explain's op count."""

ATTR_GRAPH_CALL_FUNCTION_OPS = "torch.compile.graph.call_function_ops"
"""Every call_function target as "target=count", most frequent first (list-capped)."""

ATTR_GRAPH_INPUT_COUNT = "torch.compile.graph.input_count"
"""Number of example inputs handed to the backend."""

ATTR_GRAPH_INPUT_SHAPES = "torch.compile.graph.input.shapes"
"""Shape of each tensor input, e.g. "[8, 16]" (symbolic sizes shown as s0...)."""

ATTR_GRAPH_INPUT_DTYPES = "torch.compile.graph.input.dtypes"
"""Distinct dtypes of the tensor inputs, e.g. "float32"."""

ATTR_GRAPH_INPUT_DEVICES = "torch.compile.graph.input.devices"
"""Distinct devices of the tensor inputs, e.g. "cpu", "cuda:0"."""

# --- attribute keys: AOT Autograd ---------------------------------------------------

ATTR_AOT_PARTITIONER = "torch.compile.aot.partitioner"
"""Name of the partition function AOT Autograd used."""

ATTR_AOT_JOINT_NODE_COUNT = "torch.compile.aot.joint.node_count"
"""Nodes in the joint forward+backward graph handed to the partitioner."""

ATTR_AOT_FORWARD_NODE_COUNT = "torch.compile.aot.forward.node_count"
"""Nodes in the partitioned forward graph."""

ATTR_AOT_BACKWARD_NODE_COUNT = "torch.compile.aot.backward.node_count"
"""Nodes in the partitioned backward graph."""

ATTR_AOT_SAVED_TENSOR_COUNT = "torch.compile.aot.saved_tensor.count"
"""Values the forward saves for the backward (forward outputs beyond the user's)."""

ATTR_AOT_GRAPH_NAME = "torch.compile.aot.graph_name"
"""AOT Autograd's name of the graph, e.g. "model__0_forward_1"."""

ATTR_AOT_NODE_COUNT = "torch.compile.aot.node_count"
"""Nodes of the graph handed to an inner (forward/backward/inference) compiler."""

ATTR_AOT_OP_COUNT = "torch.compile.aot.op_count"
"""call_function nodes of the graph handed to an inner compiler (ATen ops)."""

ATTR_AOT_COMPILER = "torch.compile.aot.compiler"
"""Name of the inner compiler AOT Autograd called (e.g. "nop", "compile_fx_inner")."""

# --- attribute keys: runs and errors ------------------------------------------------

ATTR_RUN_KIND = "torch.compile.run.kind"
"""forward, backward or inference: the compiled graph a run, a CUDA-graph decision or a
`torch.compile.graph_text` log event (AOT Autograd's graphs, inductor's output code)
belongs to."""

ATTR_RUN_INDEX = "torch.compile.run.index"
"""1-based count of executions of this compiled graph, this one included."""

ATTR_RUN_DEVICE = "torch.compile.run.device"
"""The device a timed run's device time was measured on ("cuda:0"). Only on CUDA runs:
on the CPU the run span's own duration is the time."""

ATTR_RUN_DEVICE_DURATION = "torch.compile.run.device.duration"
"""Seconds between CUDA events recorded on the device's current stream just before and
just after the compiled call: the device's time for the call's work (kernels or a CUDA
graph replay), as opposed to the span's duration, which is the host's launch time."""

ATTR_RUN_DEVICE_DROP_REASON = "torch.compile.run.device.drop_reason"
"""Why a run that was to be timed on the device has no device time (pending_limit,
process_exit, stream_capturing, device_error)."""

ATTR_CUDAGRAPH_DECISION = "torch.compile.cudagraph.decision"
"""graphed or skipped: what inductor decided for this graph when CUDA graphs were asked for
(``mode="reduce-overhead"``, ``triton.cudagraphs``)."""

ATTR_CUDAGRAPH_SKIP_REASON = "torch.compile.cudagraph.skip_reason"
"""Why inductor did not CUDA-graph this graph, as torch states it."""

ATTR_CUDAGRAPH_SKIP_CATEGORY = "torch.compile.cudagraph.skip_category"
"""The skip reason's kind, a bounded set fit for metric labels: cpu_device,
mutated_inputs, dynamic_shapes, incompatible_ops, multiple_devices, rerecord_limit,
other."""

ATTR_CUDAGRAPH_PARTITIONS = "torch.compile.cudagraph.partition_count"
"""Partitions inductor split the graph into for CUDA graphs (``cudagraph_partitions``)."""

ATTR_CUDAGRAPH_AT = "torch.compile.cudagraph.at"
"""compile or run: when the skip was decided (cudagraph trees decide some at a run)."""

ATTR_CACHE_NAME = "torch.compile.cache.name"
"""Which compile cache a lookup went to: inductor_fx or aot_autograd."""

ATTR_CACHE_STATE = "torch.compile.cache.state"
"""What a cache lookup found: hit, miss or bypass."""

ATTR_VARIANT_CALLS = "torch.compile.variant.calls"
"""Calls a compiled variant (one compile id: a cache entry of its frame) served so far:
the runs of its graph that ran most (each call of the entry runs each of its graphs
once), an int."""

ATTR_ERROR_TYPE = "error.type"
"""Fully qualified class name of the exception that failed the operation."""

ATTR_ERROR_MESSAGE = "torch.compile.error.message"
"""First line of the failing exception's message (length-capped)."""

# --- attribute keys: torch.export ---------------------------------------------------

ATTR_EXPORT_MODULE_CLASS = "torch.export.module.class"
"""Qualified class name of the exported nn.Module, e.g. "mypkg.model.Encoder"."""

ATTR_EXPORT_STRICT = "torch.export.strict"
"""Whether the export traced in strict mode (through Dynamo), a bool."""

ATTR_EXPORT_DYNAMIC_SHAPES = "torch.export.dynamic_shapes"
"""Whether dynamic_shapes was given to the export, a bool."""

ATTR_EXPORT_OP_COUNT = "torch.export.graph.op_count"
"""call_function nodes of the exported (or decomposed) graph: ATen ops."""

ATTR_EXPORT_NODE_COUNT = "torch.export.graph.node_count"
"""All FX nodes of the exported (or decomposed) graph, placeholders and output included."""

ATTR_EXPORT_OPS = "torch.export.graph.ops"
"""Most frequent op targets of the graph as "target=count" strings, most frequent first."""

ATTR_EXPORT_PARAMETER_COUNT = "torch.export.signature.parameter_count"
"""Parameters lifted as graph inputs by the graph signature."""

ATTR_EXPORT_BUFFER_COUNT = "torch.export.signature.buffer_count"
"""Buffers lifted as graph inputs by the graph signature."""

ATTR_EXPORT_CONSTANT_COUNT = "torch.export.signature.constant_count"
"""Lifted tensor constants and custom objects in the graph signature."""

ATTR_EXPORT_USER_INPUT_COUNT = "torch.export.signature.user_input_count"
"""User inputs of the graph signature."""

ATTR_EXPORT_USER_OUTPUT_COUNT = "torch.export.signature.user_output_count"
"""User outputs of the graph signature."""

ATTR_EXPORT_BUFFER_MUTATION_COUNT = "torch.export.signature.buffer_mutation_count"
"""Buffer mutations the graph signature records (functionalised: after decompositions)."""

ATTR_EXPORT_USER_INPUT_MUTATION_COUNT = "torch.export.signature.user_input_mutation_count"
"""User-input mutations the graph signature records."""

ATTR_EXPORT_RANGE_CONSTRAINT_COUNT = "torch.export.range_constraint_count"
"""Symbolic sizes with a range constraint in the exported program."""

ATTR_EXPORT_DECOMP_OP_COUNT_BEFORE = "torch.export.decompositions.op_count_before"
"""ATen ops (call_function nodes) of the program before run_decompositions."""

ATTR_EXPORT_DECOMP_OP_COUNT_AFTER = "torch.export.decompositions.op_count_after"
"""ATen ops (call_function nodes) of the program run_decompositions returned."""

ATTR_EXPORT_DECOMP_OPS_ADDED = "torch.export.decompositions.ops_added"
"""Op targets more frequent after decomposing, as "target=+count", largest change first."""

ATTR_EXPORT_DECOMP_OPS_REMOVED = "torch.export.decompositions.ops_removed"
"""Op targets less frequent after decomposing, as "target=-count", largest change first."""

ATTR_EXPORT_DECOMP_TABLE_SIZE = "torch.export.decompositions.table_size"
"""Entries of the decomposition table used (the default table's when none was given)."""

ATTR_EXPORT_DECOMP_DEFAULT_TABLE = "torch.export.decompositions.default_table"
"""Whether run_decompositions used torch's default table (no table given), a bool."""

ATTR_EXPORT_ERROR_MESSAGE = "torch.export.error.message"
"""First line of the export error's message (length-capped)."""

ATTR_EXPORT_ERROR_KIND = "torch.export.error.kind"
"""torch's kind of export error: UserErrorType / ExportErrorType name or Dynamo's gb_type."""

ATTR_EXPORT_ERROR_CLASSIFIED = "torch.export.error.classified"
"""Whether torch classifies the export error (exportdb case), as its usage log does; a bool."""

ATTR_EXPORT_ERROR_CASE = "torch.export.error.case"
"""exportdb case name of a classified export error (e.g. "cond_predicate")."""

ATTR_EXPORT_OPERATION = "torch.export.operation"
"""Metric/log attribute: which export call: export or run_decompositions."""

ATTR_EXPORT_OUTCOME = "torch.export.outcome"
"""Metric attribute: outcome of an export call: success or failure."""

# --- attribute values ---------------------------------------------------------------

OUTCOME_SUCCESS = "success"
"""Frame compiled and produced at least one graph."""

OUTCOME_FAILURE = "failure"
"""Frame compile raised an error."""

OUTCOME_SKIPPED = "skipped"
"""Dynamo skipped the frame and ran it eagerly."""

OUTCOME_NO_GRAPH = "no_graph"
"""Frame compiled without producing any graph (e.g. a graph break before any op)."""

OUTCOME_INTERRUPTED = "interrupted"
"""The process got SIGTERM or SIGHUP while this frame compiled: the span was ended and
exported before the signal did what it would have done (``error.type`` is its name)."""

CUDAGRAPH_GRAPHED = "graphed"
"""torch.compile.cudagraph.decision: inductor CUDA-graphed the graph."""

CUDAGRAPH_SKIPPED = "skipped"
"""torch.compile.cudagraph.decision: inductor ran the graph without CUDA graphs."""

CUDAGRAPH_CATEGORY_CPU_DEVICE = "cpu_device"
"""torch.compile.cudagraph.skip_category: the graph has no CUDA device at all (CUDA graphs
need CUDA), whatever torch's text says of it."""

CUDAGRAPH_AT_COMPILE = "compile"
"""torch.compile.cudagraph.at: decided while compiling the graph."""

CUDAGRAPH_AT_RUN = "run"
"""torch.compile.cudagraph.at: decided at a run (cudagraph trees: mutated inputs seen at a
run, the re-recording limit)."""

CACHE_INDUCTOR_FX = "inductor_fx"
"""torch.compile.cache.name: inductor's FX graph cache."""

CACHE_AOT_AUTOGRAD = "aot_autograd"
"""torch.compile.cache.name: AOT Autograd's cache."""

CACHE_HIT = "hit"
"""torch.compile.cache.state: found, compilers not called."""

CACHE_MISS = "miss"
"""torch.compile.cache.state: not found, compiled and saved."""

CACHE_BYPASS = "bypass"
"""torch.compile.cache.state: not cacheable, compiled and not saved."""

DROP_PENDING_LIMIT = "pending_limit"
"""torch.compile.run.device.drop_reason: too many device timings were pending."""

DROP_PROCESS_EXIT = "process_exit"
"""torch.compile.run.device.drop_reason: the process ended before the device finished."""

DROP_STREAM_CAPTURING = "stream_capturing"
"""torch.compile.run.device.drop_reason: the run was inside a CUDA graph capture."""

DROP_DEVICE_ERROR = "device_error"
"""torch.compile.run.device.drop_reason: recording or querying the events failed."""

GRAPH_TEXT_DYNAMO = "dynamo_output_graph"
"""The FX graph Dynamo handed the backend (`gm.print_readable()` with strides and devices)."""

GRAPH_TEXT_AOT_JOINT = "aot_joint_graph"
"""AOT Autograd's joint forward-backward graph."""

GRAPH_TEXT_AOT_FORWARD = "aot_forward_graph"
"""AOT Autograd's forward graph after partitioning."""

GRAPH_TEXT_AOT_BACKWARD = "aot_backward_graph"
"""AOT Autograd's backward graph after partitioning."""

GRAPH_TEXT_AOT_INFERENCE = "aot_inference_graph"
"""AOT Autograd's graph when no gradient is needed."""

GRAPH_TEXT_OUTPUT_CODE = "inductor_output_code"
"""The Python module inductor generated (its kernels inline)."""

GRAPH_TEXT_GUARDS = "dynamo_guards"
"""Dynamo's guard tree for the frame, as text (values and source lines as the capture allows)."""

GRAPH_TEXT_KINDS = (
    GRAPH_TEXT_DYNAMO,
    GRAPH_TEXT_AOT_JOINT,
    GRAPH_TEXT_AOT_FORWARD,
    GRAPH_TEXT_AOT_BACKWARD,
    GRAPH_TEXT_AOT_INFERENCE,
    GRAPH_TEXT_OUTPUT_CODE,
    GRAPH_TEXT_GUARDS,
)
"""Every `torch.compile.graph_text.kind`, in the order a compile produces them."""

COMPILE_KIND_FRAME = "frame"
"""A frame compile (``torch.compile.compile.kind``)."""

COMPILE_KIND_LAZY_BACKWARD = "lazy_backward"
"""A backward compiled lazily at its first run (``torch.compile.compile.kind``)."""

TIME_TRACING = "tracing"
"""Dynamo tracing bytecode into a graph."""

TIME_AOT_JOINT_GRAPH = "aot.joint_graph"
"""AOT Autograd collecting metadata and tracing the joint forward-backward graph."""

TIME_AOT_PARTITION = "aot.partition"
"""AOT Autograd partitioning the joint graph into forward and backward."""

TIME_AOT_OTHER = "aot.other"
"""The rest of AOT Autograd's own time (not its inner compilers)."""

TIME_BACKEND_LOWERING = "backend.lowering"
"""Inductor's graph passes and lowering (``GraphLowering.run``)."""

TIME_BACKEND_CODEGEN = "backend.codegen"
"""Inductor's scheduling and code generation."""

TIME_BACKEND_COMPILE = "backend.compile"
"""Compiling and loading generated code (``compile_file``, ``async_compile.wait``)."""

TIME_BACKEND_AUTOTUNE = "backend.autotune"
"""Autotuning and benchmarking kernel choices."""

TIME_BACKEND_OTHER = "backend.other"
"""The rest of the backend's time (all of it for backends that time no phases)."""

TIME_GUARDS = "guards"
"""Building the frame's guards."""

TIME_CACHE = "cache"
"""Compile-cache lookups and saves (AOT Autograd, FX graph, Triton bundles): keys,
lookups, writing entries."""

TIME_CACHE_LOAD = "cache_load"
"""Loading a compiled graph from a compile cache (AOT Autograd, FX graph and the Inductor
code it names, Triton bundles, precompiled guards; local or remote): the warm path,
everything inside the load included, never counted as compiling."""

TIME_OTHER = "other"
"""Time no timed phase covers (Dynamo's own bookkeeping, garbage collection)."""

COMPILE_MODE_DEFAULT = "default"
"""``torch.compile``'s mode when none is given (``torch.compile.mode``); the report does
not show it."""

RUN_KIND_FORWARD = "forward"
"""Run of a compiled forward graph."""

RUN_KIND_BACKWARD = "backward"
"""Run of a compiled backward graph."""

RUN_KIND_INFERENCE = "inference"
"""Run of a compiled inference graph."""

RUN_KIND_EXPORT = "export"
"""Run of a module made by ExportedProgram.module()."""

EXPORT_OPERATION_EXPORT = "export"
"""torch.export.operation value: a torch.export.export call."""

EXPORT_OPERATION_DECOMPOSITIONS = "run_decompositions"
"""torch.export.operation value: an ExportedProgram.run_decompositions call."""

INSTRUMENTATION_NAME = "otel_dynamo"
"""Instrumentation scope name of every tracer, meter and logger otel_dynamo creates."""

SCHEMA_URL = "https://opentelemetry.io/schemas/1.33.0"
"""Schema URL of every tracer, meter and logger: the semantic conventions whose names are
used here (``code.function.name``, ``code.file.path``, ``code.line.number`` as stabilized
in 1.33.0; ``error.type``, ``exception.*``)."""

# --- metrics ------------------------------------------------------------------------
# Names follow OpenTelemetry conventions (dotted, no unit or _total suffix); the
# Prometheus exporter turns "torch.compile.compile.duration" (unit s) into
# torch_compile_compile_duration_seconds and counters into *_total.

METRIC_COMPILES = "torch.compile.compiles"
"""Frame compiles, by torch.compile.backend and torch.compile.outcome."""

METRIC_COMPILE_DURATION = "torch.compile.compile.duration"
"""Compile wall time, by backend, outcome and ``torch.compile.compile.kind`` (frame
compiles and lazy backward compiles)."""

METRIC_COMPILE_TIME = "torch.compile.time"
"""A compile's seconds per category (``torch.compile.time.category``), by backend and
``torch.compile.compile.kind``; per compile the categories add up to its duration."""

METRIC_GRAPHS = "torch.compile.graphs"
"""Graphs handed to the backend, by backend."""

METRIC_GRAPH_BREAKS = "torch.compile.graph_breaks"
"""Graph breaks, by torch.compile.graph_break.kind."""

METRIC_RECOMPILES = "torch.compile.recompiles"
"""Recompiles (frame compiles after the first of a code object)."""

METRIC_GUARDS = "torch.compile.guards.per_frame"
"""Guards installed per frame compile."""

METRIC_CACHE_ENTRIES = "torch.compile.frame.cache_entries"
"""The cache entries a frame compile found for its code (0: first compile; the recompile
limit, 8 by default, refuses the compile that would add a 9th), by backend."""

METRIC_RUNS = "torch.compile.runs"
"""Compiled-graph executions (all runs, sampled or not), by run kind."""

METRIC_RUN_DURATION = "torch.compile.run.duration"
"""Host-side duration of recorded compiled runs, by kind."""

METRIC_RUN_DEVICE_DURATION = "torch.compile.run.device.duration"
"""The device time of timed runs (CUDA events around the call, resolved without a sync), by
run kind, backend, device and compile id (past ``MAX_DEVICE_TIME_COMPILE_IDS`` compile
ids, "other")."""

METRIC_RUN_DEVICE_DROPPED = "torch.compile.run.device.dropped"
"""Runs that were to be timed on the device but got no device time, by
torch.compile.run.device.drop_reason."""

METRIC_CUDAGRAPH_GRAPHS = "torch.compile.cudagraph.graphs"
"""CUDA-graph decisions on compiled graphs, by decision and skip category (skips decided at
a run count too)."""

METRIC_CACHE_LOOKUPS = "torch.compile.cache.lookups"
"""Compile cache lookups, by cache (inductor_fx, aot_autograd) and state (hit, miss,
bypass)."""

METRIC_VARIANT_CALLS = "torch.compile.variant.calls"
"""The calls each compiled variant served (a variant is one cache entry of a frame: one
compile id; observed when the reader collects), by torch.compile.id and
torch.compile.run.kind; the first ``MAX_VARIANT_SERIES`` compile ids of a process get a
series each, later ones share "other"."""

METRIC_FAILURES = "torch.compile.failures"
"""Compile and run failures, by torch.compile.stage and error.type."""

METRIC_FAULTS = "torch.compile.faults"
"""Injected faults, by torch.compile.fault.kind."""

METRIC_EXPORTS = "torch.export.exports"
"""Torch.export calls, by torch.export.operation and outcome."""

METRIC_EXPORT_DURATION = "torch.export.duration"
"""Torch.export call wall time, by operation and outcome."""

ATTR_STAGE = "torch.compile.stage"
"""Metric/log attribute: where a failure happened: compile or run."""

ATTR_FAULT_KIND = "torch.compile.fault.kind"
"""Kind of an injected fault: compile, runtime, accuracy or non_leaf_compile."""

ATTR_FAULT_TARGET = "torch.compile.fault.target"
"""The op an injected fault targets (a torch function or aten op name, e.g. relu)."""

ATTR_ACCURACY_PASSED = "torch.compile.accuracy.passed"
"""On the first run span of a graph (accuracy checks on): compiled matches eager (bool)."""

ATTR_ACCURACY_MAX_ABS_ERROR = "torch.compile.accuracy.max_abs_error"
"""Largest absolute difference between compiled and eager results (float)."""

ATTR_ACCURACY_MAX_REL_ERROR = "torch.compile.accuracy.max_rel_error"
"""Largest absolute difference divided by the largest eager magnitude, per tensor (float)."""

ATTR_ACCURACY_TOLERANCE = "torch.compile.accuracy.tolerance"
"""Tolerance of the check: torch._dynamo.config.repro_tolerance (float)."""

ATTR_REPRO_PATH = "torch.compile.repro.path"
"""Path of the standalone repro script written for a failing graph (string)."""

# --- structured log events ----------------------------------------------------------

LOG_FRAME_COMPILED = "torch.compile.frame_compiled"
"""Log event: a frame compile ended (any outcome)."""

LOG_GRAPH_COMPILED = "torch.compile.graph_compiled"
"""Log event: the backend compiled one graph."""

LOG_CUDAGRAPH_SKIPPED = "torch.compile.cudagraph_skipped"
"""Inductor did not CUDA-graph a graph: the reason as torch states it, its category,
compile id, graph kind, and whether it was decided at compile or at a run."""

LOG_CACHE_BYPASSED = "torch.compile.cache_bypassed"
"""A compile cache was bypassed: which cache, the reason torch gives, the compile id."""

LOG_VARIANT_CALLS = "torch.compile.variant_calls"
"""Log event: how many calls a compiled variant (compile id) has served so far, by run
kind; written before each flush for the variants that served calls since the last one, so
the last such event of a compile id holds its count."""

LOG_GRAPH_BREAK = "torch.compile.graph_break"
"""Log event: Dynamo reported a graph break."""

LOG_RECOMPILE = "torch.compile.recompile"
"""Log event: a frame was recompiled; carries the failed guard."""

LOG_COMPILE_FAILED = "torch.compile.compile_failed"
"""Log event: a compile raised; carries the exception."""

LOG_RUN_FAILED = "torch.compile.run_failed"
"""Log event: a compiled graph raised while running; carries the exception."""

LOG_FAULT_INJECTED = "torch.compile.fault_injected"
"""Log event: otel_dynamo injected a configured fault."""

LOG_ACCURACY_CHECKED = "torch.compile.accuracy_checked"
"""Log event: the first run of a compiled graph was compared with eager (error if not passed)."""

LOG_REPRO_WRITTEN = "torch.compile.repro_written"
"""Log event: a repro script was written for a failing graph; carries its path."""

LOG_STILL_COMPILING = "torch.compile.still_compiling"
"""Log event: a frame compile has been running longer than the threshold."""

LOG_GRAPH_TEXT = "torch.compile.graph_text"
"""Log event: the text of one graph, output code or guard tree, in the span of the compile
step that made it (only with `graphs` in `OTEL_DYNAMO_CAPTURE`)."""

LOG_EXPORTED = "torch.export.exported"
"""Log event: a torch.export.export call returned a program."""

LOG_EXPORT_FAILED = "torch.export.export_failed"
"""Log event: a torch.export.export call raised; carries the exception."""

LOG_DECOMPOSED = "torch.export.decomposed"
"""Log event: a run_decompositions call returned a program."""

LOG_DECOMPOSITION_FAILED = "torch.export.decomposition_failed"
"""Log event: a run_decompositions call raised; carries the exception."""

LOG_CONFIG_PROBLEM = "otel_dynamo.config_problem"
"""Log event: an OTEL_DYNAMO_* or OTEL_* variable had a bad value."""

# --- resource attributes (from the torchrun environment) ----------------------------

RESOURCE_RANK = "torch.distributed.rank"
"""Global rank of the process (torchrun RANK), an int."""

RESOURCE_LOCAL_RANK = "torch.distributed.local_rank"
"""Rank within the node (torchrun LOCAL_RANK), an int."""

RESOURCE_WORLD_SIZE = "torch.distributed.world_size"
"""Number of processes in the job (torchrun WORLD_SIZE), an int."""

RESOURCE_NODE_RANK = "torch.distributed.node_rank"
"""Rank of the node (torchrun GROUP_RANK), an int."""

RESOURCE_RUN_ID = "torch.distributed.run_id"
"""torchrun's rendezvous run id (TORCHELASTIC_RUN_ID), a string."""

RESOURCE_TORCH_VERSION = "torch.version"
"""The version of the torch that compiled (``torch.__version__``, e.g. "2.13.0+cpu"):
reasons, hints and fixes differ between torch releases, and the report never imports
torch."""

# --- resource attributes of the OpenTelemetry semantic conventions ------------------

RESOURCE_SERVICE_NAME = "service.name"
"""The job's service name (OTEL_SERVICE_NAME; by default the job's program, such as
"train" for ``python train.py``, else "torch-compile")."""

RESOURCE_SERVICE_INSTANCE_ID = "service.instance.id"
"""The SDK's id of this process's providers, unique per process."""

RESOURCE_HOST_NAME = "host.name"
"""The host the process ran on."""

RESOURCE_PROCESS_PID = "process.pid"
"""The id of the process that wrote the telemetry, an int."""

# --- log event attributes -----------------------------------------------------------

ATTR_COMPILE_ELAPSED = "torch.compile.elapsed"
"""On still_compiling log events: seconds the frame compile has been running (float)."""


# --- which count or state attribute a cache lookup goes to (code and report share it) ---

CACHE_COUNT_ATTRIBUTES: dict[tuple[str, str], str] = {
    (CACHE_INDUCTOR_FX, CACHE_HIT): ATTR_CACHE_FX_HITS,
    (CACHE_INDUCTOR_FX, CACHE_MISS): ATTR_CACHE_FX_MISSES,
    (CACHE_INDUCTOR_FX, CACHE_BYPASS): ATTR_CACHE_FX_BYPASSES,
    (CACHE_AOT_AUTOGRAD, CACHE_HIT): ATTR_CACHE_AOT_HITS,
    (CACHE_AOT_AUTOGRAD, CACHE_MISS): ATTR_CACHE_AOT_MISSES,
    (CACHE_AOT_AUTOGRAD, CACHE_BYPASS): ATTR_CACHE_AOT_BYPASSES,
}
"""A cache lookup's (cache, state) and the count attribute of compile spans it adds to."""

CACHE_STATE_ATTRIBUTES: dict[str, str] = {
    CACHE_INDUCTOR_FX: ATTR_CACHE_FX_STATE,
    CACHE_AOT_AUTOGRAD: ATTR_CACHE_AOT_STATE,
}
"""A cache and the attribute holding its lookup's state on the compile step span."""


# --- keys earlier versions wrote, for readers of their files ----------------------------

LEGACY_ATTRIBUTES: dict[str, str] = {
    ATTR_OUTCOME: "torch.compile.frame.outcome",
}
"""An attribute key and the key versions before its rename wrote for the same fact: a
reader of files looks for the key, then for the legacy one."""


ARRAY_ATTRIBUTES: frozenset[str] = frozenset(
    {
        ATTR_GUARDS,
        ATTR_FRAME_RESTART_REASONS,
        ATTR_GRAPH_BREAK_REASONS,
        ATTR_GRAPH_BREAK_USER_STACK,
        ATTR_GRAPH_BREAK_HINTS,
        ATTR_CODE_ARGUMENTS,
        ATTR_GRAPH_OPS,
        ATTR_GRAPH_CALL_FUNCTION_OPS,
        ATTR_GRAPH_INPUT_SHAPES,
        ATTR_GRAPH_INPUT_DTYPES,
        ATTR_GRAPH_INPUT_DEVICES,
        ATTR_EXPORT_OPS,
        ATTR_EXPORT_DECOMP_OPS_ADDED,
        ATTR_EXPORT_DECOMP_OPS_REMOVED,
    }
)
"""The attribute keys otel_dynamo writes as arrays (of strings), on spans and span events.
A trace store that keeps no arrays (Jaeger's v1 model, behind its Badger, Cassandra and
Elasticsearch storage) hands them back as JSON text: the report turns only these keys back
into arrays, never guessing from a value's look (a guard's text may itself read ``[...]``)."""


class MetricInstrument(NamedTuple):
    """What kind of OpenTelemetry instrument a metric is, and its unit (UCUM)."""

    kind: str
    """``counter``, ``updowncounter``, ``histogram`` or ``gauge`` (an observable counter
    is a ``counter``: Prometheus and the dashboards read it alike)."""
    unit: str


METRIC_INSTRUMENTS: dict[str, MetricInstrument] = {
    METRIC_COMPILES: MetricInstrument("counter", "{compile}"),
    METRIC_COMPILE_DURATION: MetricInstrument("histogram", "s"),
    METRIC_COMPILE_TIME: MetricInstrument("histogram", "s"),
    METRIC_GRAPHS: MetricInstrument("counter", "{graph}"),
    METRIC_GRAPH_BREAKS: MetricInstrument("counter", "{break}"),
    METRIC_RECOMPILES: MetricInstrument("counter", "{recompile}"),
    METRIC_GUARDS: MetricInstrument("histogram", "{guard}"),
    METRIC_CACHE_ENTRIES: MetricInstrument("histogram", "{entry}"),
    METRIC_RUNS: MetricInstrument("counter", "{run}"),
    METRIC_RUN_DURATION: MetricInstrument("histogram", "s"),
    METRIC_RUN_DEVICE_DURATION: MetricInstrument("histogram", "s"),
    METRIC_RUN_DEVICE_DROPPED: MetricInstrument("counter", "{run}"),
    METRIC_CUDAGRAPH_GRAPHS: MetricInstrument("counter", "{graph}"),
    METRIC_CACHE_LOOKUPS: MetricInstrument("counter", "{lookup}"),
    METRIC_VARIANT_CALLS: MetricInstrument("counter", "{call}"),
    METRIC_FAILURES: MetricInstrument("counter", "{failure}"),
    METRIC_FAULTS: MetricInstrument("counter", "{fault}"),
    METRIC_EXPORTS: MetricInstrument("counter", "{export}"),
    METRIC_EXPORT_DURATION: MetricInstrument("histogram", "s"),
}
"""Each metric's instrument kind and unit, stated here only: ``_recording/metrics.py``
creates the instruments with these units, the dashboards and alert rules
(``grafana/dashgen/catalog.py``) and docs/names.md read them from here."""
