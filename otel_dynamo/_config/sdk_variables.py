"""The names of the standard ``OTEL_*`` variables, as the OpenTelemetry SDK spells them.

The one door from ``_config`` to OpenTelemetry: its two modules of variable-name
constants (``opentelemetry.environment_variables``, the API's, and
``opentelemetry.sdk.environment_variables``), which import nothing else of it (no SDK,
no exporter: a fraction of a millisecond), so configuration stays parsing only. A test
checks both (tests/config/test_sdk_variables.py); the import-linter contract allows this
module, and only it, to import them.

Each constant's value is its own name (the specification's spelling). A name an older
release train lacks (``OTEL_CONFIG_FILE`` before 1.39) is spelled by its name here too:
that train's SDK does not read the variable, and the configuration still names it.
"""

from __future__ import annotations

from types import ModuleType

from opentelemetry import environment_variables as _api_names
from opentelemetry.sdk import environment_variables as _sdk_names

__all__ = ["api_env", "sdk_env"]


class VariableNames:
    """The constants of one of OpenTelemetry's name modules, by attribute."""

    def __init__(self, module: ModuleType) -> None:
        self._module = module

    def __getattr__(self, name: str) -> str:
        if not name.startswith("OTEL_"):
            raise AttributeError(name)
        value = getattr(self._module, name, name)
        return value if isinstance(value, str) else name


api_env = VariableNames(_api_names)
sdk_env = VariableNames(_sdk_names)
