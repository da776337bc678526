"""Where a compile's time went: Dynamo's timed phases folded into a few categories.

Dynamo times its work as nested phases (``entire_frame_compile > compile_attempt_0 >
backend_compile > create_aot_dispatcher_function > compile_fx.<locals>.fw_compiler_base >
inductor_compile > ... > async_compile.wait``). Each instant of a compile is charged to
the innermost phase running then (its *self time*), and each phase to a category: its own
when its name says one, else the category of the phase around it (inductor's many
``pass.*`` phases are lowering because ``_recursive_post_grad_passes`` is). Time no phase
covers is ``other``. The categories therefore never overlap and add up to the compile's
duration, which the report, the span attributes and the metrics all rely on.

Loading from a compile cache is the one category that holds everything under it: a warm
compile's ``AOTAutogradCache.inductor_load`` runs ``PyCodeCache.load_by_key_path`` (and,
on a machine whose kernel cache is gone, compiles C++ again), and all of it is the
load's time, not compiling. ``PyCodeCache.load_by_key_path`` itself is compiling only
where inductor's code generation calls it (a cold compile); anywhere else (an FX graph
cache hit) it loads a cached graph.

Nested calls of AOT Autograd's inner compilers are timed by the AOT source (a pseudo-phase
named ``INNER_COMPILER_PHASE``), so a backend that names no phases of its own (a custom
``aot_autograd(fw_compiler=...)``) still shows as backend time, not AOT time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from otel_dynamo import names
from otel_dynamo._recording.frame_state import Phase, nest_phases

INNER_COMPILER_PHASE = "otel_dynamo.aot_inner_compiler"
"""The pseudo-phase of an AOT inner compiler call (forward, backward, inference)."""
PARTITION_PHASE = "otel_dynamo.aot_partition"
"""The pseudo-phase of an AOT partitioner call."""
CODE_LOAD_PHASE = "PyCodeCache.load_by_key_path"
"""Inductor importing a graph's generated module: loading it from the cache, or, under
code generation (``CODE_GENERATION_PHASES``), compiling it."""
CODE_GENERATION_PHASES = frozenset({"GraphLowering.compile_to_module", "code_gen"})
"""The phases of a cold compile under which ``CODE_LOAD_PHASE`` compiles the module."""

_EXACT = {
    "bytecode_tracing": names.TIME_TRACING,
    "insert_deferred_runtime_asserts": names.TIME_TRACING,
    "build_guards": names.TIME_GUARDS,
    "create_aot_dispatcher_function": names.TIME_AOT_OTHER,
    "aot_collect_metadata": names.TIME_AOT_JOINT_GRAPH,
    "aot_trace_joint_graph": names.TIME_AOT_JOINT_GRAPH,
    PARTITION_PHASE: names.TIME_AOT_PARTITION,
    INNER_COMPILER_PHASE: names.TIME_BACKEND_OTHER,
    "backend_compile": names.TIME_BACKEND_OTHER,
    "GraphLowering.run": names.TIME_BACKEND_LOWERING,
    "additional_fake_tensor_prop": names.TIME_BACKEND_LOWERING,
    "_recursive_pre_grad_passes": names.TIME_BACKEND_LOWERING,
    "_recursive_joint_graph_passes": names.TIME_BACKEND_LOWERING,
    "_recursive_post_grad_passes": names.TIME_BACKEND_LOWERING,
    "code_gen": names.TIME_BACKEND_CODEGEN,
    "GraphLowering.codegen": names.TIME_BACKEND_CODEGEN,
    "PythonWrapperCodegen.generate": names.TIME_BACKEND_CODEGEN,
    "compile_file": names.TIME_BACKEND_COMPILE,
    "async_compile.wait": names.TIME_BACKEND_COMPILE,
    CODE_LOAD_PHASE: names.TIME_CACHE_LOAD,
    "gc": names.TIME_OTHER,
    "AOTAutogradCache.inductor_load": names.TIME_CACHE_LOAD,
    "CompiledArtifact.load": names.TIME_CACHE_LOAD,
    "TritonBundler.load_cached_static_autotuners": names.TIME_CACHE_LOAD,
    "StaticAutotunerFuture.warm_precompile": names.TIME_CACHE_LOAD,
    "precompile_load_guards": names.TIME_CACHE_LOAD,
}
"""Dynamo's, AOT Autograd's and inductor's phase names (torch 2.8-2.15) by category."""

_PREFIXES = (
    ("Scheduler.", names.TIME_BACKEND_CODEGEN),
    ("compile_fx.", names.TIME_BACKEND_OTHER),
    ("aot_", names.TIME_AOT_OTHER),
)
_SUBSTRINGS = (
    ("autotun", names.TIME_BACKEND_AUTOTUNE),
    ("select_algorithm", names.TIME_BACKEND_AUTOTUNE),
    ("benchmark", names.TIME_BACKEND_AUTOTUNE),
    ("partition", names.TIME_AOT_PARTITION),
    ("guard", names.TIME_GUARDS),
    ("cache", names.TIME_CACHE),
    ("bundler", names.TIME_CACHE),
)


def category(phase_name: str) -> str | None:
    """The category a phase name states, or None (it takes its enclosing phase's)."""
    exact = _EXACT.get(phase_name)
    if exact is not None:
        return exact
    for prefix, found in _PREFIXES:
        if phase_name.startswith(prefix):
            return found
    lowered = phase_name.lower()
    for part, found in _SUBSTRINGS:
        if part in lowered:
            return found
    return None


def split_seconds(phases: Iterable[Phase], duration_ns: int) -> dict[str, float]:
    """Seconds per category (names.TIME_*) of a compile lasting ``duration_ns``.

    Only categories with time are present; they add up to the duration (phases running
    past it, e.g. timed on another clock, are clipped into ``other`` staying >= 0).
    """
    ordered = list(nest_phases(list(phases)))
    categories: dict[int, str] = {}
    phase_names: dict[int, str] = {}
    child_ns: dict[int, int] = {}
    for index, parent, phase in ordered:
        phase_names[index] = phase.name
        inherited = categories.get(parent) if parent is not None else None
        parent_name = phase_names.get(parent) if parent is not None else None
        categories[index] = _category_within(phase.name, inherited, parent_name)
        if parent is not None:
            child_ns[parent] = child_ns.get(parent, 0) + _length(phase)
    charged: dict[str, int] = {}
    for index, _parent, phase in ordered:
        self_ns = max(_length(phase) - child_ns.get(index, 0), 0)
        charged[categories[index]] = charged.get(categories[index], 0) + self_ns
    covered = sum(_length(phase) for _index, parent, phase in ordered if parent is None)
    charged[names.TIME_OTHER] = charged.get(names.TIME_OTHER, 0) + max(duration_ns - covered, 0)
    return {key: value / 1e9 for key, value in sorted(charged.items()) if value > 0}


def _category_within(name: str, enclosing: str | None, enclosing_name: str | None) -> str:
    """A phase's category given the phase around it (its category and name)."""
    if enclosing == names.TIME_CACHE_LOAD:
        return names.TIME_CACHE_LOAD
    if name == CODE_LOAD_PHASE and enclosing_name in CODE_GENERATION_PHASES:
        return names.TIME_BACKEND_COMPILE
    return category(name) or enclosing or names.TIME_OTHER


TIME_DECIMALS = 6
"""Seconds of the split are exported to the microsecond, as attributes and as metrics."""


def time_attributes(split: Mapping[str, float]) -> dict[str, float]:
    """The split as span attributes (``torch.compile.time.<category>``, seconds)."""
    return {
        names.ATTR_TIME_PREFIX + key: round(value, TIME_DECIMALS) for key, value in split.items()
    }


def _length(phase: Phase) -> int:
    return max(phase.end_ns - phase.start_ns, 0)
