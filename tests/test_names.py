"""names.py, the public contract: every name documented in place, exported, in docs/names.md."""

from __future__ import annotations

import ast
import itertools
import pathlib
import subprocess
import sys

from otel_dynamo import names

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _documented_constants() -> dict[str, str]:
    """Constant name -> value for every module-level string in names.py with a docstring."""
    tree = ast.parse((ROOT / "otel_dynamo" / "names.py").read_text())
    body, found = tree.body, {}
    for node, following in itertools.pairwise(body):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            documented = isinstance(following, ast.Expr) and isinstance(
                following.value, ast.Constant
            )
            found[node.targets[0].id] = node.value.value if documented else ""
    return found


def test_every_name_constant_has_a_docstring_and_is_exported():
    """Each constant in names.py is documented in place and listed in __all__."""
    constants = _documented_constants()
    assert all(constants.values()), [k for k, v in constants.items() if not v]
    assert set(constants) == set(names.__all__)


def test_every_name_is_documented_in_the_readme():
    """docs/names.md (linked from the README) mentions every span name, attribute key,
    metric and event name."""
    readme = (ROOT / "docs" / "names.md").read_text()
    missing = [value for value in _documented_constants().values() if f"`{value}`" not in readme]
    assert not missing, missing


def test_the_names_document_is_generated_from_names_py():
    """docs/names.md is exactly what docs/generate_names.py makes of names.py."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "generate_names.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
