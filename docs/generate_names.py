"""Write docs/names.md from otel_dynamo/names.py: every constant, its value and its
docstring, grouped as ``__all__`` groups them; and rewrite names.py's ``__all__`` to list
exactly its name constants. ``--check`` fails if either differs.

    python docs/generate_names.py [--check]

``__all__`` stays a literal (mypy and ``from otel_dynamo.names import *`` read it as
written); its names are computed: every module-level constant whose value is a string (the
names otel_dynamo emits; the tuples and dicts built from them are helpers, not names). A
new constant joins the group of the constant defined just before it; a removed one leaves.
"""

from __future__ import annotations

import ast
import itertools
import sys
from pathlib import Path

from generated_files import write_or_check  # docs/, the script's folder

ROOT_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT_DIR))

from otel_dynamo import names  # noqa: E402  (METRIC_INSTRUMENTS: each metric's kind and unit)

ROOT = Path(__file__).resolve().parents[1]
NAMES = ROOT / "otel_dynamo" / "names.py"
OUTPUT = ROOT / "docs" / "names.md"
SECTIONS = (
    ("span names", "Span names"),
    ("attribute keys", "Attribute keys"),
    ("log event attributes", None),  # listed with the attribute keys
    ("values", "Attribute values"),
    ("instrumentation scope", "Instrumentation scope"),
    ("metrics", "Metrics"),
    ("log events", "Log events"),
    ("resource attributes", "Resource attributes"),
)
"""__all__'s group comments, in the order the document gives them, and their headings."""
HEADER = """# Names (the public contract)

Every name otel_dynamo emits is a constant in `otel_dynamo/names.py`, documented there
and below (this file is generated from it: `python docs/generate_names.py`); a test
fails if the two differ. The `torch.compile.*` and `torch.export.*` names are versioned by
the package version: the `schema_url` every tracer, meter and logger carries
(`SCHEMA_URL`) is the OpenTelemetry semantic-conventions version of the standard names
used here, and does not cover these. A renamed one is listed in CHANGELOG.md with what to
change in saved queries, and the report still reads files that carry the old name
(`LEGACY_ATTRIBUTES`).
"""


def _groups(source: str) -> dict[str, list[str]]:
    """__all__'s constants under each group comment (``# span names``)."""
    groups: dict[str, list[str]] = {}
    current = None
    in_all = False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith("__all__"):
            in_all = True
        elif in_all and stripped == "]":
            break
        elif in_all and stripped.startswith("# "):
            current = stripped[2:]
            groups[current] = []
        elif in_all and stripped.startswith('"') and current is not None:
            groups[current].append(stripped.strip('",'))
    return groups


def string_values(source: str) -> dict[str, str]:
    """Every module-level constant of names.py whose value is a string, in order, and its
    value; an alias (``OLD = NEW``, a deprecated name kept for importers) has its target's."""
    found: dict[str, str] = {}
    for node in ast.parse(source).body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            text = value.value
        elif isinstance(value, ast.Name) and value.id in found:
            text = found[value.id]
        else:
            continue
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        if isinstance(target, ast.Name) and not target.id.startswith("_"):
            found[target.id] = text
    return found


def name_constants(source: str) -> list[str]:
    """Every module-level constant of names.py whose value is a string, in order."""
    return list(string_values(source))


def render_all(source: str) -> str:
    """names.py with ``__all__`` listing exactly :func:`name_constants`, in its groups."""
    groups = _groups(source)
    listed = {name: group for group, members in groups.items() for name in members}
    defined = name_constants(source)
    kept = {
        group: [name for name in members if name in defined] for group, members in groups.items()
    }
    previous_group = next(iter(groups))
    for name in defined:
        if name in listed:
            previous_group = listed[name]
        else:
            kept[previous_group].append(name)
    lines = source.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("__all__"))
    end = next(i for i in range(start, len(lines)) if lines[i].strip() == "]")
    body = [lines[start]]
    for group, members in kept.items():
        body.append(f"    # {group}\n")
        body.extend(f'    "{name}",\n' for name in members)
    return "".join([*lines[:start], *body, *lines[end:]])


def _documented(source: str) -> dict[str, tuple[str, str]]:
    """Constant -> (value, docstring on one line)."""
    values = string_values(source)
    found = {}
    for node, following in itertools.pairwise(ast.parse(source).body):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in values
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
        ):
            doc = " ".join(str(following.value.value).split())
            found[node.targets[0].id] = (values[node.targets[0].id], doc)
    return found


def render(source: str) -> str:
    groups, documented = _groups(source), _documented(source)
    lines = [HEADER]
    for group, heading in SECTIONS:
        if heading is not None:
            lines += [f"## {heading}", "", "| constant | value | meaning |", "|---|---|---|"]
        for constant in groups.get(group, ()):
            value, doc = documented[constant]
            instrument = names.METRIC_INSTRUMENTS.get(value) if group == "metrics" else None
            if instrument is not None:
                doc = f"{instrument.kind.capitalize()}, unit ``{instrument.unit}``. {doc}"
            meaning = doc.replace("``", "`").replace("|", r"\|")
            lines.append(f"| `{constant}` | `{value}` | {meaning} |")
        following = [h for g, h in SECTIONS[SECTIONS.index((group, heading)) + 1 :]]
        if following[:1] != [None]:
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> int:
    names_source = render_all(NAMES.read_text(encoding="utf-8"))
    files = {NAMES: names_source, OUTPUT: render(names_source)}
    return write_or_check(files, description=__doc__.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
