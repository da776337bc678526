"""The demo's model and training job (``otel-dynamo demo``): a small, real training loop under
torch.compile, traced, then its report.

The model has what the report is for: a deliberate graph break (a ``print`` in
``forward``), a shape recompile (the batch shrinks halfway through training), a grad-mode
recompile (evaluation under ``torch.no_grad``) and a dtype recompile (then in float64).
Telemetry goes through the embedded default, OTLP/JSON Lines files in the output
directory, whatever OTLP endpoint the environment names: the demo must work with no
server. Only this run's files are reported, so running it again into the same directory
reports one run.
"""

from __future__ import annotations

import dataclasses
import io
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from otel_dynamo._providers.process_providers import ProcessProviders

DEFAULT_BACKEND = "aot_eager"
"""Compiles in about a second on two CPU cores; inductor takes several per graph."""

DEFAULT_STEPS = 4
MIN_STEPS = 2
"""Two steps at least: the second half of training runs a smaller batch (the recompile)."""

FEATURES, HIDDEN, CLASSES = 16, 32, 4
BATCH = 8
SMALL_BATCH = 6
LEARNING_RATE = 0.1
SEED = 0

HTML_NAME = "demo-report.html"
SERVICE_NAME = "otel-dynamo-demo"
SHUTDOWN_SECONDS = 10.0
"""Budget to flush the files at the end; local files take milliseconds."""

_KEPT_OTEL_VARIABLES = frozenset({"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"})


class DemoError(Exception):
    """The demo cannot run as asked (e.g. an unknown backend); the message says why."""


@dataclasses.dataclass(frozen=True)
class DemoRun:
    """What one demo run wrote and how long it took."""

    output_dir: Path
    files: tuple[Path, ...]
    seconds: float


def demo_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without the OTEL_* exporter settings, so telemetry goes to files.

    otel_dynamo's own variables and the resource ones (service name, attributes) stay, so
    the configuration check still reports a malformed one; the resource itself is read
    from the process environment, as the SDK reads it.
    """
    kept = {
        key: value
        for key, value in environ.items()
        if not key.startswith("OTEL_")
        or key.startswith("OTEL_DYNAMO_")
        or key in _KEPT_OTEL_VARIABLES
    }
    return kept


def default_output_dir(environ: Mapping[str, str] | None = None) -> Path:
    """OTEL_DYNAMO_OUTPUT_DIR, as the embedded default reads it."""
    from otel_dynamo._config.settings import load_settings

    return Path(load_settings(os.environ if environ is None else environ).output_dir)


def run_demo(*, output_dir: Path, backend: str, steps: int) -> DemoRun:
    """Train and evaluate the demo model with telemetry to files in ``output_dir``."""
    from otel_dynamo._config.settings import load_settings
    from otel_dynamo._providers.setup import setup_providers

    started = time.perf_counter()
    environ = demo_environment(os.environ)
    settings = dataclasses.replace(load_settings(environ), output_dir=str(output_dir))
    before = set(_own_files(output_dir))
    providers = setup_providers(settings, environ=environ, default_service_name=SERVICE_NAME)
    try:
        _train_and_evaluate(backend, steps, providers)
    finally:
        providers.shutdown(SHUTDOWN_SECONDS)
    # An empty file (a signal nothing was recorded for) is no input problem: leave it out.
    files = tuple(
        path for path in _own_files(output_dir) if path not in before and path.stat().st_size
    )
    return DemoRun(output_dir, files, time.perf_counter() - started)


def _own_files(directory: Path) -> list[Path]:
    """Telemetry files this process writes in ``directory`` (see otel_dynamo._providers.files)."""
    from otel_dynamo._providers.files import FILE_SUFFIX, safe_host_name

    pattern = f"*-{safe_host_name()}-{os.getpid()}-*{FILE_SUFFIX}"
    return sorted(directory.glob(pattern)) if directory.is_dir() else []


def _train_and_evaluate(backend: str, steps: int, providers: ProcessProviders) -> None:
    import torch
    from torch._dynamo.exc import InvalidBackend

    import otel_dynamo

    try:
        traced = otel_dynamo.traced(
            backend,
            tracer_provider=providers.tracer_provider,
            meter_provider=providers.meter_provider,
            logger_provider=providers.logger_provider,
        )
    except InvalidBackend as error:
        raise DemoError(f"--backend {backend!r}: {error}") from None
    torch.manual_seed(SEED)
    model = _model()
    compiled = torch.compile(model, backend=traced)
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    for step in range(steps):
        batch = BATCH if step < steps // 2 else SMALL_BATCH  # new shape: a recompile
        loss = compiled(torch.randn(batch, FEATURES)).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    with torch.no_grad():
        compiled(torch.randn(BATCH, FEATURES))  # grad mode off: a recompile
        model.double()
        compiled(torch.randn(BATCH, FEATURES, dtype=torch.float64))  # new dtype: a recompile


def _model() -> torch.nn.Module:
    import torch

    class DemoNet(torch.nn.Module):
        """Encoder, a graph break, head: two graphs per compiled forward."""

        def __init__(self) -> None:
            super().__init__()
            self.encoder = torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU())
            self.head = torch.nn.Linear(HIDDEN, CLASSES)
            self.notes = io.StringIO()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            hidden = self.encoder(x)
            print("batch of", x.shape[0], file=self.notes)  # deliberate graph break
            logits: torch.Tensor = self.head(hidden)
            return logits

    return DemoNet()
