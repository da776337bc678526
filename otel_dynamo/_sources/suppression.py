"""OpenTelemetry's suppress-instrumentation flag: code inside
``opentelemetry.instrumentation.utils.suppress_instrumentation()`` is not traced.

Instrumentations check it so that an exporter's own HTTP calls, or any block a user marks,
record nothing. Here a frame compiled, a graph compiled or a compiled graph run while it is
set records nothing: the compile or run itself goes on exactly as untraced.

The check is the public ``is_instrumentation_enabled`` of the module that sets the flag,
asked only once something has imported that module: before, nothing can have set it the
public way. Importing it ourselves would load the propagators, which read every installed
distribution's entry points (once 0.13 s of CPU in a Llama job); looking it up in
``sys.modules`` costs one dictionary lookup per check.
"""

from __future__ import annotations

import sys

__all__ = ["SUPPRESSING_MODULE", "suppressed"]

SUPPRESSING_MODULE = "opentelemetry.instrumentation.utils"
"""Where ``suppress_instrumentation`` and ``is_instrumentation_enabled`` live."""


def suppressed() -> bool:
    """Whether the current context asks instrumentations to stay quiet."""
    utils = sys.modules.get(SUPPRESSING_MODULE)
    if utils is None:
        return False
    try:
        return not utils.is_instrumentation_enabled()
    except Exception:  # never the reason a compile fails
        return False
