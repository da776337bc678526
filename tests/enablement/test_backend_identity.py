"""Dynamo's backend match decides the same traced as plain, for every way a backend
reaches Dynamo: a model compiled block by block (regional compilation) compiles
``forward`` exactly as often traced as plain, and a traced backend compares equal to
another exactly when the backends they wrap would."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch._dynamo
from _dynamo_truth import dynamo_stream
from _spans import named
from programs.differential_jobs import ResidualMLP

import otel_dynamo
from otel_dynamo import names
from otel_dynamo._sources.traced_backend import BackendIdentity, TracedBackend

pytestmark = pytest.mark.torch_facing  # Dynamo's backend match, on every torch

BLOCKS = 4
WIDTH = 16
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def eager_backend(gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
    return gm.forward


def options_backend(gm: torch.fx.GraphModule, example_inputs: Any, *, scale: int) -> Any:
    return gm.forward


SHARED_PARTIAL = functools.partial(options_backend, scale=2)

Compiler = Callable[[torch.nn.Module], Callable[..., Any]]
"""Compiles one block the way a job does (returns what the job then calls)."""


def _module_compile(backend: Any) -> Compiler:
    def compile_block(block: torch.nn.Module) -> Callable[..., Any]:
        block.compile(backend=backend)
        return block

    return compile_block


def _optimize(backend: Any) -> Compiler:
    def compile_block(block: torch.nn.Module) -> Callable[..., Any]:
        return torch._dynamo.optimize(backend)(block)

    return compile_block


def _traced_per_block(backend: Any) -> Compiler:
    def compile_block(block: torch.nn.Module) -> Callable[..., Any]:
        return _module_compile(otel_dynamo.traced(backend))(block)

    return compile_block


FORMS: dict[str, tuple[Compiler, Compiler]] = {
    "name, Module.compile": (_module_compile("aot_eager"), _module_compile("aot_eager")),
    "callable, torch.compile": (
        lambda b: torch.compile(b, backend=eager_backend),
        lambda b: torch.compile(b, backend=eager_backend),
    ),
    "one functools.partial": (
        lambda b: torch.compile(b, backend=SHARED_PARTIAL),
        lambda b: torch.compile(b, backend=SHARED_PARTIAL),
    ),
    "a new functools.partial per block": (
        lambda b: torch.compile(b, backend=functools.partial(options_backend, scale=2)),
        lambda b: torch.compile(b, backend=functools.partial(options_backend, scale=2)),
    ),
    "torch._dynamo.optimize(name)": (_optimize("aot_eager"), _optimize("aot_eager")),
    "torch._dynamo.optimize(callable)": (_optimize(eager_backend), _optimize(eager_backend)),
    "an otel_ twin by name": (_module_compile("aot_eager"), _module_compile("otel_aot_eager")),
    "otel_dynamo.traced() per block": (
        _module_compile("aot_eager"),
        _traced_per_block("aot_eager"),
    ),
    "otel_dynamo.traced(callable) per block": (
        _module_compile(eager_backend),
        _traced_per_block(eager_backend),
    ),
    "torch.compile with mode and options": (
        lambda b: torch.compile(b, backend="aot_eager", options={"x": 1}, dynamic=False),
        lambda b: torch.compile(b, backend="aot_eager", options={"x": 1}, dynamic=False),
    ),
}
"""Each backend form: how the plain job compiles a block, and how the traced job does
(``instrument()`` is on for the traced one)."""


def regional_compiles(compile_block: Compiler) -> list[tuple[str, str]]:
    """Compile ids and recompile reasons of ``BLOCKS`` blocks, each compiled on its own,
    over two training steps (the second's input requires grad)."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    blocks = [compile_block(ResidualMLP(WIDTH)) for _ in range(BLOCKS)]
    with dynamo_stream() as stream:
        for step in range(2):
            hidden = torch.randn(2, WIDTH).requires_grad_(step == 1)
            for block in blocks:
                hidden = block(hidden)
            hidden.sum().backward()
    compiles = []
    for record in stream.records:
        if "compilation_metrics" in record:
            compile_id = f"{record.get('frame_id')}/{record.get('frame_compile_id')}"
            reason = record["compilation_metrics"].get("recompile_reason") or ""
            compiles.append((compile_id, ADDRESS.sub("0x?", reason)))
    return compiles


@pytest.mark.parametrize("form", sorted(FORMS))
def test_regional_compilation_recompiles_as_plain(form: str, provider) -> None:
    """Blocks compiled one by one with backend form ``form``: traced (by ``instrument()``,
    and by the form itself), Dynamo compiles and recompiles, ids and reasons, exactly as
    plain."""
    plain_form, traced_form = FORMS[form]
    plain = regional_compiles(plain_form)
    otel_dynamo.instrument(tracer_provider=provider)
    try:
        traced = regional_compiles(traced_form)
    finally:
        otel_dynamo.uninstrument()
    assert traced == plain


def test_the_regional_job_compiles_forward_once_and_recompiles_once(provider, exporter) -> None:
    """Four blocks with ``block.compile(backend="aot_eager")``, traced: ``forward`` is
    compiled once and recompiled once, for requires_grad, never for the backend, and both
    frame compiles are recorded."""
    otel_dynamo.instrument(tracer_provider=provider)
    try:
        traced = regional_compiles(_module_compile("aot_eager"))
    finally:
        otel_dynamo.uninstrument()
    assert [compile_id for compile_id, _ in traced] == ["0/0", "0/1"]
    assert "requires_grad mismatch" in traced[1][1]
    frames = named(exporter.get_finished_spans(), names.SPAN_FRAME)
    assert [span.attributes[names.ATTR_COMPILE_ID] for span in frames] == ["0/0", "0/1"]


def _traced(backend: Any) -> TracedBackend:
    traced = otel_dynamo.traced(backend)
    assert isinstance(traced, TracedBackend)
    return traced


def test_traced_backends_of_one_name_are_equal_and_hash_alike() -> None:
    """Two traced("aot_eager") are equal, hash alike; traced("eager") is not equal."""
    first, second = _traced("aot_eager"), _traced("aot_eager")
    assert first == second and hash(first) == hash(second)
    assert first != _traced("eager")


def test_traced_partials_are_equal_only_when_the_partials_are() -> None:
    """One partial object traced twice: equal; two equal-looking partials: not (as torch
    compares partials, by identity)."""
    assert _traced(SHARED_PARTIAL) == _traced(SHARED_PARTIAL)
    assert _traced(functools.partial(options_backend, scale=2)) != _traced(
        functools.partial(options_backend, scale=2)
    )


def test_traced_compile_wrappers_follow_torchs_equality_without_a_hash_of_their_own() -> None:
    """torch.compile's wrappers (equality, no hash) traced: equal when torch's equality
    says so (backend, mode, options, dynamic), hash alike, unequal otherwise."""
    make = torch._TorchCompileWrapper  # type: ignore[attr-defined]
    first = _traced(make("aot_eager", None, {"a": 1}, None))
    second = _traced(make("aot_eager", None, {"a": 1}, None))
    other = _traced(make("aot_eager", None, {"a": 2}, None))
    assert first == second and hash(first) == hash(second)
    assert first != other


class RaisingEquality:
    """A backend whose equality raises."""

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
        return gm.forward

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no equality here")

    __hash__ = object.__hash__


def test_a_backend_whose_equality_raises_is_equal_only_to_itself() -> None:
    """As torch's lookup does: an equality that raises means unequal, never an error."""
    backend = RaisingEquality()
    assert BackendIdentity(backend) == BackendIdentity(backend)
    assert BackendIdentity(backend) != BackendIdentity(RaisingEquality())
    assert _traced(backend) == _traced(backend)


def test_instrument_shares_one_traced_backend_per_backend_identity(provider) -> None:
    """Under instrument(), equal backends get one traced backend (one recorder): the
    compiled blocks' torch.compile wrappers all wrap the same one."""
    otel_dynamo.instrument(tracer_provider=provider)
    try:
        compiled = [torch.compile(ResidualMLP(WIDTH), backend="aot_eager") for _ in range(3)]
        wrappers = [_compile_wrapper(module) for module in compiled]
        assert len({id(wrapper) for wrapper in wrappers}) == 3  # torch's three wrappers ...
        assert len({id(wrapper.compiler_fn) for wrapper in wrappers}) == 1  # ... one inside
        assert type(wrappers[0].compiler_fn) is TracedBackend
    finally:
        otel_dynamo.uninstrument()


def _compile_wrapper(compiled: Any) -> Any:
    """The backend torch.compile handed Dynamo for ``compiled`` (down the callback's chain)."""
    from otel_dynamo._sources.traced_backend import innermost_backend

    callback = compiled.dynamo_ctx.callback  # OptimizedModule's _TorchDynamoContext
    return innermost_backend(callback)
