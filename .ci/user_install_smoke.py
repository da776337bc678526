"""As a user would, with otel_dynamo installed from its wheel next to some torch.

    python .ci/user_install_smoke.py

Runs a small training job (``tests/programs/compile_job.py``: a graph break, two steps,
``aot_eager``) from an empty directory with ``OTEL_DYNAMO_ENABLED=true`` and no other
setting, so otel_dynamo comes from site-packages, not from this checkout. Passes when the
job's files hold a frame compile, a graph, an AOT partition, forward and backward compile
spans and forward and backward run spans, and the job printed no otel_dynamo warning.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

JOB = Path(__file__).resolve().parents[1] / "tests" / "programs" / "compile_job.py"
REQUIRED_SPANS = frozenset(
    {
        "torch.compile.frame",
        "torch.compile.graph",
        "torch.compile.aot.partition",
        "torch.compile.aot.forward",
        "torch.compile.aot.backward",
        "torch.compile.run.forward",
        "torch.compile.run.backward",
    }
)
TIMEOUT_S = 600
WHERE = "import otel_dynamo, torch; print(otel_dynamo.__file__, torch.__version__)"


def span_names(directory: Path) -> set[str]:
    found = set()
    for path in directory.glob("traces-*.jsonl"):
        for line in path.read_text().splitlines():
            for resource in json.loads(line).get("resourceSpans", []):
                for scope in resource.get("scopeSpans", []):
                    found.update(span["name"] for span in scope.get("spans", []))
    return found


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="otel-dynamo-user-") as directory:
        env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
        env.update(OTEL_DYNAMO_ENABLED="true", JOB_BACKEND="aot_eager")
        env.pop("PYTHONPATH", None)
        job = subprocess.run(
            [sys.executable, str(JOB)],
            check=False,
            cwd=directory,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
        where = subprocess.run(
            [sys.executable, "-c", WHERE],
            cwd=directory,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        names = span_names(Path(directory) / "otel-dynamo")
    problems = []
    if job.returncode != 0:
        problems.append(f"the job exited {job.returncode}:\n{job.stderr[-3000:]}")
    if "otel_dynamo:" in job.stderr:
        problems.append(f"otel_dynamo warned:\n{job.stderr[-3000:]}")
    if missing := REQUIRED_SPANS - names:
        problems.append(f"no {', '.join(sorted(missing))} span (found {sorted(names)})")
    print(f"user install smoke ({where}): {'FAILED' if problems else 'passed'}")
    for problem in problems:
        print(f"  {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
