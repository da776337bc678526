"""OTEL_DYNAMO_FIX_ACTIONS, which ``otel-dynamo run --try-fixes`` sets in a re-run: the
start-up hook applies the actions right after ``import torch``; an action that cannot be
applied stops the job with one message (a re-run without its fix would be judged on
something else)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CHECK = (
    "import torch, torch._dynamo; config = torch._dynamo.config; "
    "print(config.capture_scalar_outputs, print in config.reorderable_logging_functions)"
)


def _python(tmp_path: Path, actions: object, code: str = CHECK) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "OTEL_DYNAMO_ENABLED": "true",
        "OTEL_DYNAMO_OUTPUT_DIR": str(tmp_path / "out"),
        "OTEL_DYNAMO_FIX_ACTIONS": json.dumps(actions),
    }
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_config_actions_are_applied_when_torch_is_imported(tmp_path: Path) -> None:
    """A config value and a callable added to a config set are in place for the job."""
    done = _python(
        tmp_path,
        [
            {
                "kind": "config",
                "name": "torch._dynamo.config.capture_scalar_outputs",
                "value": True,
            },
            {
                "kind": "config_add",
                "name": "torch._dynamo.config.reorderable_logging_functions",
                "value": "builtins.print",
            },
        ],
    )
    assert (done.returncode, done.stdout) == (0, "True True\n"), done.stderr


def test_an_unknown_config_stops_the_job_naming_it(tmp_path: Path) -> None:
    """A config this torch does not have: exit status 2, one message naming the variable
    and the config, the job's code never run."""
    done = _python(
        tmp_path, [{"kind": "config", "name": "torch._dynamo.config.no_such_flag", "value": True}]
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.strip().splitlines()[-1] == (
        "otel_dynamo: OTEL_DYNAMO_FIX_ACTIONS: the fix cannot be applied: this torch has no "
        "config torch._dynamo.config.no_such_flag"
    )


def test_a_callable_is_never_imported_for_a_config_add(tmp_path: Path) -> None:
    """config_add looks its callable up in modules already imported: one in a module the
    job has not imported is refused, and that module stays unimported."""
    code = "import sys, torch; print('json.tool' in sys.modules)"
    done = _python(
        tmp_path,
        [
            {
                "kind": "config_add",
                "name": "torch._dynamo.config.reorderable_logging_functions",
                "value": "json.tool.main",
            }
        ],
        code,
    )
    assert done.returncode == 2
    assert "'json.tool.main' is not found in an imported module" in done.stderr
