"""The names of the standard ``OTEL_*`` variables, as the OpenTelemetry SDK spells them.

The one door from ``_config`` to OpenTelemetry: its two modules of variable-name
constants (``opentelemetry.environment_variables``, the API's, and
``opentelemetry.sdk.environment_variables``), which import nothing else of it (no SDK,
no exporter: a fraction of a millisecond), so configuration stays parsing only. A test
checks both (tests/config/test_sdk_variables.py); the import-linter contract allows this
module, and only it, to import them.
"""

from __future__ import annotations

from opentelemetry import environment_variables as api_env
from opentelemetry.sdk import environment_variables as sdk_env

__all__ = ["api_env", "sdk_env"]
