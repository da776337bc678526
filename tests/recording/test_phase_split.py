"""The compile-time split: Dynamo's nested phases folded into exclusive categories."""

from __future__ import annotations

import pytest

from otel_dynamo import names
from otel_dynamo._recording.frame_state import Phase
from otel_dynamo._recording.phase_split import (
    INNER_COMPILER_PHASE,
    category,
    split_seconds,
    time_attributes,
)

MS = 1_000_000


def _phase(name: str, start_ms: int, end_ms: int) -> Phase:
    return Phase(name, start_ms * MS, end_ms * MS)


INDUCTOR_FRAME = [
    _phase("entire_frame_compile", 0, 1000),
    _phase("compile_attempt_0", 10, 900),
    _phase("bytecode_tracing", 10, 110),
    _phase("backend_compile", 120, 890),
    _phase("create_aot_dispatcher_function", 130, 880),
    _phase("aot_trace_joint_graph", 140, 190),
    _phase("min_cut_rematerialization_partition", 190, 220),
    _phase("compile_fx.<locals>.fw_compiler_base", 230, 870),
    _phase("inductor_compile", 231, 869),
    _phase("_recursive_post_grad_passes", 240, 300),
    _phase("pass.post_grad_passes.reinplace_inplaceable_ops", 250, 270),
    _phase("GraphLowering.run", 300, 400),
    _phase("code_gen", 400, 860),
    _phase("Scheduler.codegen", 410, 500),
    _phase("PyCodeCache.load_by_key_path", 500, 850),
    _phase("async_compile.wait", 510, 840),
    _phase("build_guards", 900, 950),
]


def test_inductor_frame_is_split_by_innermost_phase() -> None:
    """Each instant goes to the innermost phase: inductor's compile inside AOT is backend
    time, not AOT time, and a pass inherits its enclosing phase's category."""
    assert split_seconds(INDUCTOR_FRAME, 1000 * MS) == {
        names.TIME_AOT_JOINT_GRAPH: 0.05,
        names.TIME_AOT_OTHER: 0.03,
        names.TIME_AOT_PARTITION: 0.03,
        names.TIME_BACKEND_CODEGEN: 0.11,
        names.TIME_BACKEND_COMPILE: 0.35,
        names.TIME_BACKEND_LOWERING: 0.16,
        names.TIME_BACKEND_OTHER: 0.04,
        names.TIME_GUARDS: 0.05,
        names.TIME_OTHER: 0.08,
        names.TIME_TRACING: 0.1,
    }


def test_categories_add_up_to_the_duration() -> None:
    """The split is exclusive: its seconds add up to the compile's duration."""
    split = split_seconds(INDUCTOR_FRAME, 1000 * MS)
    assert sum(split.values()) == pytest.approx(1.0)


def test_time_no_phase_covers_is_other() -> None:
    """A compile with no timed phase is all ``other``; one with a single phase has the rest
    in ``other``."""
    assert split_seconds([], 40 * MS) == {names.TIME_OTHER: 0.04}
    assert split_seconds([_phase("bytecode_tracing", 0, 30)], 40 * MS) == {
        names.TIME_TRACING: 0.03,
        names.TIME_OTHER: 0.01,
    }


def test_inner_compiler_pseudo_phase_is_backend_time() -> None:
    """An AOT inner compiler timed by otel_dynamo (a backend that names no phases) is
    backend time inside AOT's."""
    phases = [
        _phase("create_aot_dispatcher_function", 0, 100),
        _phase(INNER_COMPILER_PHASE, 20, 90),
    ]
    assert split_seconds(phases, 100 * MS) == {
        names.TIME_AOT_OTHER: 0.03,
        names.TIME_BACKEND_OTHER: 0.07,
    }


WARM_FRAME = [
    _phase("entire_frame_compile", 0, 1000),
    _phase("bytecode_tracing", 0, 100),
    _phase("backend_compile", 100, 900),
    _phase("AOTAutogradCache.inductor_load", 110, 890),
    _phase("PyCodeCache.load_by_key_path", 120, 880),
    _phase("compile_file", 130, 870),
    _phase("build_guards", 900, 950),
]


def test_everything_a_cache_load_runs_is_loading_from_cache() -> None:
    """A warm compile's AOT Autograd cache load, the code import and even a C++ compile
    inside it, is cache_load time; none of it backend compile."""
    assert split_seconds(WARM_FRAME, 1000 * MS) == {
        names.TIME_BACKEND_OTHER: 0.02,
        names.TIME_CACHE_LOAD: 0.78,
        names.TIME_GUARDS: 0.05,
        names.TIME_OTHER: 0.05,
        names.TIME_TRACING: 0.1,
    }


def test_a_code_load_outside_code_generation_is_an_fx_graph_cache_hit() -> None:
    """PyCodeCache.load_by_key_path straight under inductor's compile (an FX graph cache
    hit loading its module) is cache_load; under code_gen (a cold compile) it compiles."""
    hit = [
        _phase("fx_codegen_and_compile", 0, 100),
        _phase("PyCodeCache.load_by_key_path", 10, 90),
    ]
    cold = [
        _phase("fx_codegen_and_compile", 0, 100),
        _phase("GraphLowering.compile_to_module", 5, 95),
        _phase("PyCodeCache.load_by_key_path", 10, 90),
    ]
    assert split_seconds(hit, 100 * MS) == {names.TIME_CACHE_LOAD: 0.08, names.TIME_OTHER: 0.02}
    assert split_seconds(cold, 100 * MS)[names.TIME_BACKEND_COMPILE] == 0.08


@pytest.mark.parametrize(
    ("phase", "expected"),
    [
        ("AOTAutogradCache.inductor_load", names.TIME_CACHE_LOAD),
        ("TritonBundler.load_cached_static_autotuners", names.TIME_CACHE_LOAD),
        ("TritonBundler.collect", names.TIME_CACHE),
        ("inductor_codecache_torch_key", names.TIME_CACHE),
        ("AlgorithmSelectorCache.autotune", names.TIME_BACKEND_AUTOTUNE),
        ("Scheduler.fused_nodes", names.TIME_BACKEND_CODEGEN),
        ("default_partition", names.TIME_AOT_PARTITION),
        ("pass.post_grad_passes.remove_noop_ops", None),
    ],
)
def test_phase_names_map_to_categories(phase: str, expected: str | None) -> None:
    """Phase names of torch 2.8-2.15 map to their category; a pass states none."""
    assert category(phase) == expected


def test_time_attributes_are_prefixed_seconds() -> None:
    """The split becomes torch.compile.time.<category> float attributes."""
    attributes = time_attributes({names.TIME_TRACING: 0.1234567})
    assert attributes == {"torch.compile.time.tracing": 0.123457}
    assert type(attributes["torch.compile.time.tracing"]) is float
