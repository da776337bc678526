"""An error inside the telemetry path is logged once and never changes the compile."""

from __future__ import annotations

import logging

import pytest
import torch
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

import otel_dynamo
from otel_dynamo._recording import boundary
from otel_dynamo._sources import graph_facts


class ExplodingProcessor(SpanProcessor):
    """A span processor that raises on span start, or only on span end."""

    def __init__(self, *, on_start: bool = True) -> None:
        self.raise_on_start = on_start

    def on_start(self, span, parent_context=None):  # type: ignore[no-untyped-def]
        if self.raise_on_start:
            raise RuntimeError("processor broke on start")

    def on_end(self, span):  # type: ignore[no-untyped-def]
        raise RuntimeError("processor broke on end")


def step(backend) -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    weight = torch.randn(3, requires_grad=True)
    fn = torch.compile(lambda x: (x * weight).sin(), backend=backend)
    out = fn(torch.ones(2, 3))
    out.sum().backward()
    return out.detach(), weight.grad


def test_failing_attribute_extractor_leaves_the_result_unchanged(provider, monkeypatch, caplog):
    """An exception while reading graph facts: same output and gradient, one warning."""
    expected = step("aot_eager")
    torch._dynamo.reset()

    def broken(*_args, **_kwargs):
        raise ValueError("extractor broke")

    monkeypatch.setattr(graph_facts, "graph_shape", broken)
    monkeypatch.setattr(boundary, "_reported", False)  # as in a fresh process
    with caplog.at_level(logging.DEBUG, logger="otel_dynamo"):
        got = step(otel_dynamo.traced("aot_eager", tracer_provider=provider))
        torch._dynamo.reset()
        step(otel_dynamo.traced("aot_eager", tracer_provider=provider))
    assert all(torch.equal(a, b) for a, b in zip(got, expected, strict=True))
    # Only the error boundary's: where this test runs first, setup also says once where
    # the telemetry goes.
    warnings = [
        r for r in caplog.records if r.name == boundary._log.name and r.levelno == logging.WARNING
    ]
    assert len(warnings) == 1 and "extractor broke" in (warnings[0].exc_text or "")


@pytest.mark.parametrize("on_start", [True, False], ids=["start", "end"])
def test_failing_span_processor_leaves_the_result_unchanged(on_start):
    """A span processor that raises (at start or at end): outputs and gradients untouched."""
    expected = step("aot_eager")
    torch._dynamo.reset()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(ExplodingProcessor(on_start=on_start))
    got = step(otel_dynamo.traced("aot_eager", tracer_provider=provider, run_spans="all"))
    assert all(torch.equal(a, b) for a, b in zip(got, expected, strict=True))


@pytest.mark.parametrize("on_start", [True, False], ids=["start", "end"])
def test_user_exception_passes_through_unchanged_despite_broken_processor(on_start):
    """With a broken processor, the backend's own exception still reaches the user as is."""
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(ExplodingProcessor(on_start=on_start))
    backend = otel_dynamo.traced("relu_compile_error_TESTING_ONLY", tracer_provider=provider)
    with pytest.raises(Exception, match="ReluCompileError"):
        torch.compile(torch.relu, backend=backend)(torch.ones(2))
