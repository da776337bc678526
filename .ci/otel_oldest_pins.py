"""Prints a pip constraints file for the oldest OpenTelemetry release train that
pyproject.toml admits: constraints.txt without its OpenTelemetry pins (and wrapt, which
that train's instrumentation package bounds below 2), then the train's own pins, read
from the lower bounds of pyproject.toml's requirements (the one place the range is
stated): the stable packages at the SDK's floor, the others at the instrumentation's.

    python .ci/otel_oldest_pins.py > constraints-oldest.txt
    python .ci/otel_oldest_pins.py --test-tools   # the test extra's other requirements

The test extra's OpenTelemetry packages (exporters some trains lack) are left out of
``--test-tools``; the tests that need them skip where they are missing.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
STABLE = (
    "opentelemetry-api",
    "opentelemetry-sdk",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-exporter-otlp-proto-grpc",
    "opentelemetry-exporter-otlp-proto-http",
)
"""Released together, at the SDK's version."""
UNSTABLE = (
    "opentelemetry-instrumentation",
    "opentelemetry-semantic-conventions",
    "opentelemetry-exporter-prometheus",
)
"""Released together, at the instrumentation package's 0.N b0 version."""
LEFT_TO_THE_TRAIN = ("wrapt",)
_FLOOR = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)\s*>=\s*(?P<floor>[0-9][^,;\s]*)")


def floors() -> dict[str, str]:
    """Each requirement's lower bound, by distribution name."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    found = {}
    for requirement in project["dependencies"]:
        match = _FLOOR.match(requirement)
        if match:
            found[match["name"]] = match["floor"]
    return found


def test_tools() -> list[str]:
    """The test extra's requirements that are not OpenTelemetry packages."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extra = project["optional-dependencies"]["test"]
    return [requirement for requirement in extra if not requirement.startswith("opentelemetry-")]


def pins() -> list[str]:
    bounds = floors()
    stable = bounds["opentelemetry-sdk"]
    stable = stable if stable.count(".") == 2 else f"{stable}.0"
    unstable = bounds["opentelemetry-instrumentation"]
    kept = [
        line
        for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
        if line.strip()
        and not line.startswith("#")
        and not line.startswith(("opentelemetry-", *LEFT_TO_THE_TRAIN))
    ]
    return [
        *kept,
        *(f"{name}=={stable}" for name in STABLE),
        *(f"{name}=={unstable}" for name in UNSTABLE),
    ]


if __name__ == "__main__":
    chosen = test_tools() if sys.argv[1:] == ["--test-tools"] else pins()
    sys.stdout.write("\n".join(chosen) + "\n")
