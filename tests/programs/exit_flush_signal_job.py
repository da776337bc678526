"""A traced job (OTEL_DYNAMO_ENABLED) that gets SIGTERM while its at-exit flush exports.

Compiles one function and calls it three times, then exits normally. At exit (an atexit
hook that runs before otel_dynamo's flush) every span and log export starts sleeping
EXPORT_SLEEP_S first; the first such export sends SIGTERM to the main thread, which is
waiting for that flush, so the signal arrives exactly while the exports are in progress.
Prints "job done" before it exits.
"""

from __future__ import annotations

import atexit
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import torch

from otel_dynamo._providers import safe_exporters

EXPORT_SLEEP_S = 0.5
_exiting = threading.Event()
_signalled = threading.Lock()


def slowed(export: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def slow_export(self: Any, batch: Any) -> Any:
        if _exiting.is_set():
            if _signalled.acquire(blocking=False):  # the first export at exit only
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGTERM)
            time.sleep(EXPORT_SLEEP_S)
        return export(self, batch)

    return slow_export


safe_exporters.SafeSpanExporter.export = slowed(safe_exporters.SafeSpanExporter.export)
safe_exporters.SafeLogExporter.export = slowed(safe_exporters.SafeLogExporter.export)

compiled = torch.compile(lambda x: x.cos() * 2, backend="eager")
for _ in range(3):
    compiled(torch.ones(3))
atexit.register(_exiting.set)  # registered after otel_dynamo's flush: runs before it
print("job done", flush=True)
