"""Environment references: ``${env:NAME:-default}`` only, each with a default.

A default on every reference lets each config validate and start with nothing set; the
credential variables (*_AUTHORIZATION) default to empty.
"""

from __future__ import annotations

import re

ENV_REF = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_ANY_REF = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*")


def env_refs(text: str) -> dict[str, set[str | None]]:
    """NAME -> the defaults it is given across the text (None: no default)."""
    found: dict[str, set[str | None]] = {}
    for match in ENV_REF.finditer(text):
        found.setdefault(match.group(1), set()).add(match.group(2))
    return found


def env_problems(text: str) -> list[str]:
    """References without a default, with two different defaults, or in another syntax."""
    problems = []
    for name, defaults in sorted(env_refs(text).items()):
        if None in defaults:
            problems.append(f"env: ${{env:{name}}} has no default (write ${{env:{name}:-...}})")
        if len(defaults - {None}) > 1:
            problems.append(f"env: {name} has different defaults: {sorted(defaults - {None})}")
    for line_no, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        for match in _ANY_REF.finditer(ENV_REF.sub("", line)):
            problems.append(
                f"env: line {line_no}: '{match.group(0)}' is not ${{env:NAME:-default}}"
            )
    return problems
