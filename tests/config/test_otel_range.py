"""The OpenTelemetry range is stated once, in pyproject.toml's requirements: the oldest
train CI installs (.ci/otel_oldest_pins.py) and the README's promise are read from it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".ci"))

from otel_oldest_pins import STABLE, UNSTABLE, floors  # noqa: E402


def _requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return list(project["dependencies"])


def test_every_opentelemetry_requirement_is_a_range_open_to_the_next_trains():
    """Each OpenTelemetry requirement has a floor and an upper bound at the next major
    version only, so a train released later installs without a new otel_dynamo."""
    otel = [r for r in _requirements() if r.startswith("opentelemetry-")]
    assert otel, "no OpenTelemetry requirement found"
    for requirement in otel:
        assert ">=" in requirement and (requirement.endswith(",<2") or requirement.endswith(",<1"))


def test_the_oldest_pins_are_the_floors_of_pyproject():
    """The CI helper pins the stable packages at the SDK's floor and the others at the
    instrumentation's, and keeps the pinned torch."""
    done = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "otel_oldest_pins.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    pins = dict(line.split("==", 1) for line in done.stdout.splitlines() if "==" in line)
    sdk, instrumentation = floors()["opentelemetry-sdk"], floors()["opentelemetry-instrumentation"]
    assert {pins[name] for name in STABLE} == {f"{sdk}.0" if sdk.count(".") == 1 else sdk}
    assert {pins[name] for name in UNSTABLE} == {instrumentation}
    assert "torch" in pins and "wrapt" not in pins


def test_the_readme_states_the_oldest_train_pyproject_admits():
    """The README's install section names the SDK floor and the instrumentation floor."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    sdk, instrumentation = floors()["opentelemetry-sdk"], floors()["opentelemetry-instrumentation"]
    assert f"any release train from {sdk}" in readme.replace("\n", " ")
    assert f"instrumentation {instrumentation}" in readme.replace("\n", " ")
