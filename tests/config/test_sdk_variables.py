"""_config's one door to OpenTelemetry: the SDK's two modules of variable names, and
nothing else of OpenTelemetry (the import-linter contract sees the package only whole)."""

from __future__ import annotations

import ast
import json
import pathlib
import subprocess
import sys

from _export_support import child_environ

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIG = ROOT / "otel_dynamo" / "_config"
NAME_MODULES = {"opentelemetry.environment_variables", "opentelemetry.sdk.environment_variables"}
ALLOWED = NAME_MODULES | {"opentelemetry", "opentelemetry.sdk"}
"""The two name modules and the packages they are in (a namespace, and the SDK's
``__init__``, which imports nothing)."""


def _imported(path: pathlib.Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(
                f"{node.module}.{alias.name}"
                if node.module in ("opentelemetry", "opentelemetry.sdk")
                else node.module
                for alias in node.names
            )
    return {name for name in found if name.split(".")[0] == "opentelemetry"}


def test_only_sdk_variables_imports_opentelemetry_and_only_its_name_modules():
    """sdk_variables imports the two name modules; no other _config module imports
    OpenTelemetry at all."""
    imports = {path.name: _imported(path) for path in sorted(CONFIG.glob("*.py"))}
    assert imports.pop("sdk_variables.py") == NAME_MODULES
    assert {name: found for name, found in imports.items() if found} == {}


def test_importing_the_configuration_loads_no_sdk_and_no_torch():
    """Every _config module imported in a fresh process: of OpenTelemetry only the two
    name modules (and their packages) are loaded; no SDK, no exporter, no torch."""
    modules = [f"otel_dynamo._config.{path.stem}" for path in sorted(CONFIG.glob("*.py"))]
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules"
        " if m.split('.')[0] in ('opentelemetry', 'torch'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=child_environ(),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert set(json.loads(done.stdout)) <= ALLOWED
