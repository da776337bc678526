"""How a frame was compiled (torch.compile's mode, options, dynamic, fullgraph) is on its
frame span, read from real compiles: instrumented, and through a traced backend."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import torch
import torch._dynamo
from _spans import named
from _telemetry_support import Signals

import otel_dynamo
from otel_dynamo import names
from otel_dynamo._recording.stream_events import CompileSettings
from otel_dynamo._sources.compile_settings import SettingsReader

pytestmark = pytest.mark.torch_facing

SETTINGS_KEYS = (
    names.ATTR_COMPILE_MODE,
    names.ATTR_COMPILE_OPTIONS,
    names.ATTR_COMPILE_DYNAMIC,
    names.ATTR_COMPILE_FULLGRAPH,
)


@pytest.fixture
def instrumented(provider: Any) -> Iterator[None]:
    torch._dynamo.reset()
    otel_dynamo.instrument(tracer_provider=provider)
    yield
    otel_dynamo.uninstrument()
    torch._dynamo.reset()


def _settings(spans: list[Any]) -> list[dict[str, Any]]:
    return [
        {key: span.attributes[key] for key in SETTINGS_KEYS if key in span.attributes}
        for span in named(spans, names.SPAN_FRAME)
    ]


def test_inductor_mode_and_dynamic_are_on_the_frame_span(instrumented: None, exporter: Any):
    """torch.compile(mode="max-autotune-no-cudagraphs", dynamic=False) with inductor: the
    mode is named (inductor keeps only its options), dynamic is false, fullgraph false."""
    compiled = torch.compile(
        lambda x: x.sin() + 1, mode="max-autotune-no-cudagraphs", dynamic=False
    )
    compiled(torch.randn(4))
    assert _settings(exporter.get_finished_spans()) == [
        {
            names.ATTR_COMPILE_MODE: "max-autotune-no-cudagraphs",
            names.ATTR_COMPILE_DYNAMIC: False,
            names.ATTR_COMPILE_FULLGRAPH: False,
        }
    ]


def test_inductor_options_beyond_the_mode_are_json(instrumented: None, exporter: Any):
    """Options given with inductor's default mode are the options attribute, as JSON."""
    compiled = torch.compile(lambda x: x.cos(), options={"trace.enabled": False})
    compiled(torch.randn(4))
    (settings,) = _settings(exporter.get_finished_spans())
    assert (
        settings[names.ATTR_COMPILE_MODE],
        json.loads(settings[names.ATTR_COMPILE_OPTIONS]),
    ) == (
        "default",
        {"trace.enabled": False},
    )


def test_other_backends_keep_mode_options_and_fullgraph(instrumented: None, exporter: Any):
    """A backend other than inductor: mode and options as given, fullgraph=True."""
    compiled = torch.compile(
        lambda x: x * 2, backend="aot_eager", fullgraph=True, options={"b": [1, 2], "a": "x"}
    )
    compiled(torch.randn(4))
    assert _settings(exporter.get_finished_spans()) == [
        {
            names.ATTR_COMPILE_MODE: "default",
            names.ATTR_COMPILE_OPTIONS: '{"a": "x", "b": [1, 2]}',
            names.ATTR_COMPILE_FULLGRAPH: True,
        }
    ]


def test_a_traced_backend_given_to_torch_compile_records_the_same() -> None:
    """torch.compile(backend=traced("aot_eager"), dynamic=True): dynamic is recorded, and
    mode "default"; an option value JSON cannot hold reads as its type's name."""
    signals = Signals()
    torch._dynamo.reset()
    compiled = torch.compile(
        lambda x: x - 1, backend=signals.traced(), dynamic=True, options={"hook": print}
    )
    compiled(torch.randn(4))
    assert _settings(signals.finished()) == [
        {
            names.ATTR_COMPILE_MODE: "default",
            names.ATTR_COMPILE_OPTIONS: '{"hook": "builtin_function_or_method"}',
            names.ATTR_COMPILE_DYNAMIC: True,
            names.ATTR_COMPILE_FULLGRAPH: False,
        }
    ]


def test_dynamo_optimize_without_torch_compile_records_only_fullgraph() -> None:
    """torch._dynamo.optimize(traced backend): no torch.compile wrapper, so no mode,
    options or dynamic; fullgraph is Dynamo's own."""
    signals = Signals()
    torch._dynamo.reset()
    torch._dynamo.optimize(signals.traced())(lambda x: x + 3)(torch.randn(4))
    assert _settings(signals.finished()) == [{names.ATTR_COMPILE_FULLGRAPH: False}]


def test_a_compiler_without_torch_compile_wrapper_gives_empty_settings() -> None:
    """No torch.compile wrapper down the chain and a fullgraph that is not a bool: every
    setting is None (nothing is guessed)."""

    class Convert:
        _one_graph = "yes"

    assert SettingsReader().settings_of(Convert(), object()) == CompileSettings()


def test_an_unreadable_compiler_switches_the_reader_off_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A ConvertFrameAssert that raises when read: no settings, one warning, and the
    reader stays off (the next, readable compile gets none and no second warning)."""

    class Exploding:
        @property
        def _one_graph(self) -> bool:
            raise RuntimeError("torch changed")

    fresh = SettingsReader()
    first = fresh.settings_of(Exploding(), None)
    second = fresh.settings_of(object(), None)
    warnings = [r for r in caplog.records if "how a frame was compiled" in r.getMessage()]
    assert (first, second, len(warnings)) == (None, None, 1)
