"""A traced job (OTEL_DYNAMO_ENABLED) that gets SIGTERM during its at-exit flush.

    python exit_flush_signal_job.py [while-exporting|while-starting-the-flush]

Compiles one function and calls it three times, then exits normally. At exit (an atexit
hook that runs before otel_dynamo's flush) the signal is placed:

* ``while-exporting`` (the default): every span and log export starts sleeping
  EXPORT_SLEEP_S first; the first such export sends SIGTERM to the main thread, which is
  waiting for that flush, so the signal arrives exactly while the exports are in progress.
* ``while-starting-the-flush``: SIGTERM is sent to the main thread as it starts the
  thread that shuts the telemetry down, once it holds that thread's start event's lock
  (the thread cannot tell it has started until the main thread lets go of it): where the
  handler would wait there for the flush, the flush could never begin.

Prints "job done" before it exits.
"""

from __future__ import annotations

import atexit
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

import torch

from otel_dynamo._providers import log_export, safe_exporters

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


SHUTDOWN_THREAD = "otel_dynamo-shutdown"


def signal_while_starting_the_flush(frame: FrameType, event: str, _arg: object) -> None:
    """A profile hook on the main thread: SIGTERM right after ``Thread.start`` of the
    shutdown thread, inside ``Event.wait``, has acquired the start event's lock."""
    if event != "return" or frame.f_code.co_name != "__enter__":
        return
    waiting = frame.f_back
    starting = waiting.f_back if waiting is not None else None
    if waiting is None or starting is None:
        return
    if (waiting.f_code.co_name, starting.f_code.co_name) != ("wait", "start"):
        return
    if getattr(starting.f_locals.get("self"), "name", None) != SHUTDOWN_THREAD:
        return
    sys.setprofile(None)
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGTERM)


while_exporting = (sys.argv[1:] or ["while-exporting"])[0] == "while-exporting"
if while_exporting:
    safe_exporters.SafeSpanExporter.export = slowed(safe_exporters.SafeSpanExporter.export)
    log_export.SafeLogExporter.export = slowed(log_export.SafeLogExporter.export)

compiled = torch.compile(lambda x: x.cos() * 2, backend="eager")
for _ in range(3):
    compiled(torch.ones(3))
# registered after otel_dynamo's flush (its providers are built at the first compile):
# runs before it
if while_exporting:
    atexit.register(_exiting.set)
else:
    atexit.register(sys.setprofile, signal_while_starting_the_flush)
print("job done", flush=True)
