"""The top-level package: cheap to import, and ConfigError reachable from it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import otel_dynamo

pytestmark = pytest.mark.torch_facing  # entry points and backends torch looks up


def test_importing_the_package_loads_only_its_version():
    """``import otel_dynamo`` loads no other otel_dynamo module, no torch, no OpenTelemetry
    (run with ``-S``: otel_dynamo.pth's start-up hook, which loads a few, is not the
    package's import)."""
    root = str(Path(otel_dynamo.__file__).resolve().parent.parent)
    code = (
        f"import sys; sys.path.insert(0, {root!r}); import json, otel_dynamo; "
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.startswith(('otel_dynamo', 'torch', 'opentelemetry')))))"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(done.stdout) == ["otel_dynamo", "otel_dynamo.version"]


def test_config_error_is_the_error_a_bad_option_raises():
    """otel_dynamo.ConfigError is the class traced() raises for a bad option value."""
    import otel_dynamo

    with pytest.raises(otel_dynamo.ConfigError, match="run_spans"):
        otel_dynamo.traced("eager", run_spans="sometimes")
