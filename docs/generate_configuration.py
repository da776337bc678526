"""Write the variable tables of docs/configuration.md from otel_dynamo/_config: every
row of ``settings.VARIABLES`` (OTEL_DYNAMO_*) and ``otel_variables.VARIABLES`` (the standard
OTEL_* variables), then ``otel_variables.DIFFERENCES``. Only the part between the two markers
is written; the prose around it is the document's own. ``--check`` fails if it differs.

    python docs/generate_configuration.py [--check]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import otel_dynamo  # noqa: E402

if Path(otel_dynamo.__file__).resolve().parents[1] != ROOT:  # another checkout's, by its .pth
    raise SystemExit(f"otel_dynamo comes from {otel_dynamo.__file__}: run with PYTHONPATH={ROOT}")

from generated_files import write_or_check  # noqa: E402  (docs/, the script's folder)

from otel_dynamo._config import otel_variables, settings  # noqa: E402
from otel_dynamo._config.settings import Variable  # noqa: E402
from otel_dynamo.report.read import jaeger  # noqa: E402

OUTPUT = ROOT / "docs" / "configuration.md"
BEGIN = (
    "<!-- generated from otel_dynamo/_config (settings.VARIABLES, otel_variables.VARIABLES, "
    "otel_variables.DIFFERENCES) and otel_dynamo/report/read/jaeger.py (VARIABLES) by python "
    "docs/generate_configuration.py: edit there -->"
)
END = "<!-- end of the generated part -->"
DIFFERENCES_INTRO = """## Deliberate differences from the SDK

otel_dynamo's own providers read the standard variables as the OpenTelemetry SDK does,
except here (the job's own providers are the SDK's, and read them as it always does):
"""


JAEGER_INTRO = """## Reading a run from Jaeger (`otel-dynamo report`, `diff`)

Read only by the commands, when a `PATH` is a Jaeger query address
([report.md](report.md#reading-a-run-from-jaeger)); never by a traced job:
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", r"\|")


def _row(variable: Variable) -> str:
    title = variable.title or ", ".join(f"`{name}`" for name in variable.names)
    cells = (title, variable.default, variable.shown or variable.accepted, variable.meaning)
    return "| " + " | ".join(_cell(cell) for cell in cells) + " |"


def render() -> str:
    """The generated part, markers included."""
    lines = [BEGIN, "", "| variable | default | accepted | meaning |", "|---|---|---|---|"]
    lines += [_row(variable) for variable in (*settings.VARIABLES, *otel_variables.VARIABLES)]
    lines += ["", DIFFERENCES_INTRO]
    lines += ["| variables | the SDK | otel_dynamo | why |", "|---|---|---|---|"]
    lines += [
        "| " + " | ".join(_cell(cell) for cell in difference) + " |"
        for difference in otel_variables.DIFFERENCES
    ]
    lines += ["", JAEGER_INTRO]
    lines += ["| variable | default | accepted | meaning |", "|---|---|---|---|"]
    lines += [
        "| " + " | ".join(_cell(cell) for cell in (f"`{row.name}`", *row[1:])) + " |"
        for row in jaeger.VARIABLES
    ]
    return "\n".join([*lines, "", END])


def rewritten(document: str) -> str:
    """``document`` with its generated part made anew."""
    head, begin, rest = document.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise SystemExit(f"{OUTPUT}: the markers of the generated part are missing")
    return head + render() + tail


def main() -> int:
    text = rewritten(OUTPUT.read_text(encoding="utf-8"))
    return write_or_check({OUTPUT: text}, description=__doc__.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
