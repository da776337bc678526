"""The real Collector's own verdict: ``validate`` run by the Collector built from
collector-config/build (``bash collector-config/build/build.sh``)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from otelcol_check.model import ROOT

STACK_BIN_VARIABLE = "OTEL_DYNAMO_STACK_BIN"
"""Where build.sh writes the binaries (default collector-config/build/bin)."""
COLLECTOR_BINARY = "otelcol-otel-dynamo"
VALIDATE_TIMEOUT_SECONDS = 60
_LOG_LINE = re.compile(r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} ")


def built_collector() -> Path | None:
    """The built Collector, or None where it was not built (no Go on this machine)."""
    folder = Path(os.environ.get(STACK_BIN_VARIABLE) or ROOT / "build" / "bin")
    binary = folder / COLLECTOR_BINARY
    return binary if binary.is_file() else None


def validate(binary: Path, configs: list[Path]) -> list[str]:
    """What the Collector says is wrong with ``configs`` merged in order (empty: valid)."""
    argv = [str(binary), "validate", *(f"--config=file:{path.resolve()}" for path in configs)]
    result = subprocess.run(
        argv, capture_output=True, text=True, timeout=VALIDATE_TIMEOUT_SECONDS, check=False
    )
    if result.returncode == 0:
        return []
    # The Collector prints its error, then the same again as one log line: keep the first.
    lines = []
    for line in (result.stderr + result.stdout).splitlines():
        if _LOG_LINE.match(line):
            break
        if line.strip():
            lines.append(line.strip())
    return [f"otelcol validate: {' '.join(lines) or 'failed'}"]
