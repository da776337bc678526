"""The debugging aids are applied in their declared order."""

from __future__ import annotations

import pytest
import torch
from _telemetry_support import Signals, TwoLayer

from otel_dynamo._sources.aids import AIDS


@pytest.fixture
def signals():
    signals = Signals()
    yield signals
    signals.shutdown()


def test_a_run_enters_the_aids_wrappers_outermost_first_as_declared(signals, tmp_path, monkeypatch):
    """With a runtime fault, repro scripts and the accuracy check all on, every aid wraps
    the compiled graph, and a run enters those wrappers in the reverse of ``AIDS`` (which
    lists the aids innermost first: faults, repro scripts, accuracy check)."""
    entered: list[object] = []

    def spying(kind):
        wrap = kind.wrap_compiled

        def wrap_compiled(self, compiled, state):
            wrapped = wrap(self, compiled, state)
            assert wrapped is not compiled, f"{kind.__name__} did not wrap"

            def run(*args, **kwargs):
                entered.append(kind)
                return wrapped(*args, **kwargs)

            return run

        return wrap_compiled

    for kind in AIDS:
        monkeypatch.setattr(kind, "wrap_compiled", spying(kind))
    backend = signals.traced("eager", fault="runtime", repro_dir=str(tmp_path), accuracy=True)
    compiled = torch.compile(TwoLayer(), backend=backend)
    with pytest.raises(AssertionError, match="ReluRuntimeError"):
        compiled(torch.randn(3, 4))
    assert tuple(reversed(entered)) == AIDS
    assert [kind.__name__ for kind in AIDS] == ["FaultInjection", "ReproScripts", "AccuracyCheck"]
