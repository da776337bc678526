"""The install commands the docs and messages give are ones that work: otel_dynamo is on
no package index, so each names a path (the clone, a wheel built from it), and each extra
it names is one the package declares (pyproject.toml, as installed)."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from otel_dynamo._config.otel_env import JSON_HTTP_DISTRIBUTION
from otel_dynamo._providers.prometheus import INSTALL_HINT

ROOT = Path(__file__).parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_TARGET = re.compile(r"pip install\s+(?:-\S+\s+)*[\"']?([^\s\"'`]+)")
_EXTRA = re.compile(r"\[([a-z-]+)\]$")


def _extras() -> dict[str, list[str]]:
    """Each extra of the installed package and the requirements it adds."""
    extras: dict[str, list[str]] = {
        extra: [] for extra in metadata.metadata("otel-dynamo").get_all("Provides-Extra") or []
    }
    for requirement in metadata.requires("otel-dynamo") or []:
        found = re.search(r"extra == [\"']([a-z-]+)[\"']", requirement)
        if found:
            extras[found[1]].append(requirement)
    return extras


def _install_targets() -> list[tuple[str, str]]:
    return [
        (path.name, match[1])
        for path in DOCS
        for match in _TARGET.finditer(path.read_text())
        if match[1] not in {"DIR"}  # the README's --target example names no package
    ]


def test_no_doc_installs_otel_dynamo_by_package_name() -> None:
    """No `pip install otel-dynamo` (or otel_dynamo) from an index in README or docs/."""
    by_name = [
        (doc, target)
        for doc, target in _install_targets()
        if not target.startswith(("./", "/", "dist/"))
    ]
    assert by_name == []


def test_every_extra_the_docs_name_is_declared() -> None:
    """Each `[extra]` in an install command is an optional dependency of the package."""
    declared = set(_extras())
    named = {m[1] for _doc, target in _install_targets() if (m := _EXTRA.search(target))}
    assert named and named <= declared, named - declared


def test_messages_name_the_packages_the_extras_install() -> None:
    """The Prometheus and OTLP/JSON hints name packages the extras depend on."""
    extras = _extras()
    assert any(dep.startswith(INSTALL_HINT.split()[2]) for dep in extras["prometheus"])
    assert any(dep.startswith(JSON_HTTP_DISTRIBUTION) for dep in extras["json-http"])
