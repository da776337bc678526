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
    """Constant name -> value for every module-level string in names.py, or an alias of
    one, with a docstring ("" where it has none)."""
    tree = ast.parse((ROOT / "otel_dynamo" / "names.py").read_text())
    body, found, values = tree.body, {}, {}
    for node, following in itertools.pairwise(body):
        if not isinstance(node, ast.Assign):
            continue
        if isinstance(node.value, ast.Constant):
            value = node.value.value
        elif isinstance(node.value, ast.Name) and node.value.id in values:
            value = values[node.value.id]  # a deprecated alias: the value of its target
        else:
            continue
        values[node.targets[0].id] = value
        documented = isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
        found[node.targets[0].id] = value if documented else ""
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
    """docs/names.md, and names.py's ``__all__``, are exactly what docs/generate_names.py
    makes of names.py."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "generate_names.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _runtime_name_constants() -> set[str]:
    """The module's public names whose value is a string, as Python sees them."""
    return {n for n, v in vars(names).items() if not n.startswith("_") and isinstance(v, str)}


def test_all_lists_every_name_constant_exactly_once():
    """names.__all__ (a literal docs/generate_names.py keeps) lists each string constant of
    the module once, and nothing else."""
    assert len(names.__all__) == len(set(names.__all__))
    assert set(names.__all__) == _runtime_name_constants()


def test_star_import_gives_the_name_constants():
    """``from otel_dynamo.names import *`` binds exactly the name constants."""
    namespace: dict[str, object] = {}
    exec("from otel_dynamo.names import *", namespace)
    assert set(namespace) - {"__builtins__"} == _runtime_name_constants()
