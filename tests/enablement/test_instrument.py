"""instrument() / uninstrument() and TorchCompileInstrumentor, in this process."""

from __future__ import annotations

import pytest
import torch
import torch._dynamo
from _spans import named

import otel_dynamo
from otel_dynamo import names
from otel_dynamo.instrumentation import TorchCompileInstrumentor

pytestmark = pytest.mark.torch_facing  # torch.compile and its backend lookup, patched


class Doubler(torch.nn.Module):
    """A user module (Dynamo does not compile torch.nn's own modules as top frames)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


@pytest.fixture
def instrumented(provider):
    original = torch._dynamo.optimize
    otel_dynamo.instrument(tracer_provider=provider)
    yield original
    otel_dynamo.uninstrument()


def graph_backends(exporter) -> list[str]:
    graphs = named(exporter.get_finished_spans(), names.SPAN_GRAPH)
    return [span.attributes[names.ATTR_BACKEND] for span in graphs]


def test_instrument_traces_torch_compile_with_any_backend(instrumented, exporter):
    """After instrument(), a plain torch.compile(backend="eager") is traced."""
    torch.compile(lambda x: x + 1, backend="eager")(torch.ones(2))
    assert graph_backends(exporter) == ["eager"]


def test_instrument_traces_module_compile(instrumented, exporter):
    """nn.Module.compile goes through torch.compile, so it is traced too."""
    module = Doubler()
    module.compile(backend="aot_eager")
    module(torch.ones(1, 2))
    assert graph_backends(exporter) == ["aot_eager"]


def test_results_unchanged_when_instrumented(instrumented):
    """Instrumented compiles compute bitwise the same result as untraced ones."""
    x = torch.randn(5)
    expected = torch.compile(lambda t: t.sin() * 3, backend="eager")(x)
    torch._dynamo.reset()
    assert torch.equal(torch.compile(lambda t: t.sin() * 3, backend="eager")(x), expected)


def test_an_already_traced_backend_is_not_wrapped_twice(instrumented, exporter, provider):
    """A traced() backend under instrument() records one graph span, not two."""
    backend = otel_dynamo.traced("eager", tracer_provider=provider)
    torch.compile(lambda x: x * 2, backend=backend)(torch.ones(2))
    assert graph_backends(exporter) == ["eager"]


def test_unknown_backend_name_still_raises_torchs_error(instrumented):
    """An unknown backend name fails as it would untraced: torch's InvalidBackend."""
    from torch._dynamo.exc import InvalidBackend

    with pytest.raises(InvalidBackend):
        torch.compile(lambda x: x, backend="no_such_backend")


def test_uninstrument_restores_the_original_function(instrumented, exporter):
    """uninstrument() puts torch._dynamo.optimize back; new compiles are not traced."""
    otel_dynamo.uninstrument()
    assert torch._dynamo.optimize is instrumented
    torch.compile(lambda x: x - 1, backend="eager")(torch.ones(2))
    assert graph_backends(exporter) == []


def test_instrumentor_instrument_and_uninstrument_are_reversible(provider, exporter):
    """TorchCompileInstrumentor().instrument()/.uninstrument() switch tracing on and off."""
    original = torch._dynamo.optimize
    instrumentor = TorchCompileInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        assert torch._dynamo.optimize is not original
        torch.compile(lambda x: x.cos(), backend="eager")(torch.ones(2))
    finally:
        instrumentor.uninstrument()
    assert torch._dynamo.optimize is original
    assert graph_backends(exporter) == ["eager"]


def test_instrumentor_declares_the_supported_torch_range():
    """instrumentation_dependencies() names torch with the range pyproject.toml states."""
    from pathlib import Path

    import tomllib
    from packaging.requirements import Requirement

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    stated = next(
        Requirement(r) for r in pyproject["project"]["dependencies"] if r.startswith("torch")
    )
    (declared,) = TorchCompileInstrumentor().instrumentation_dependencies()
    assert Requirement(declared).specifier == stated.specifier


def test_the_torch_range_is_read_from_the_installed_distribution():
    """TORCH_REQUIREMENT is the installed otel-dynamo's Requires-Dist torch line itself
    (pyproject.toml is the one place the range is written)."""
    import importlib.metadata

    from otel_dynamo.instrumentation import TORCH_REQUIREMENT

    requires = importlib.metadata.requires("otel-dynamo") or []
    assert [line for line in requires if line.startswith("torch")] == [TORCH_REQUIREMENT]
    assert TORCH_REQUIREMENT == "torch<2.16,>=2.8"


def test_the_version_is_stated_once_in_version_py():
    """pyproject.toml states no version of its own: it is dynamic, read by the build from
    otel_dynamo/version.py; the installed distribution's version is otel_dynamo's."""
    import importlib.metadata
    from pathlib import Path

    import tomllib

    import otel_dynamo

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"]
    assert pyproject["project"]["dynamic"] == ["version"]
    assert pyproject["tool"]["hatch"]["version"] == {"path": "otel_dynamo/version.py"}
    assert importlib.metadata.version("otel-dynamo") == otel_dynamo.__version__ == "0.1.0"
