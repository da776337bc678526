"""Forks children the way DataLoader workers are made, while telemetry is buffered and busy.

The parent sets up telemetry (embedded files), buffers spans, log events and a metric,
and optionally keeps a thread exporting while it forks, and waits for a file to appear
before the first fork (``--fork-after``: an exporter's import has begun). Each child
emits one span and one event and ends either like a DataLoader worker (``os._exit``) or
like a normal program (``sys.exit``, running atexit). A child that does not end within
CHILD_DEADLINE_S is killed and reported as stuck.

Prints one JSON line: the parent's pid, and per child its pid, whether it ended by
itself and how long it took.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

CHILD_DEADLINE_S = 10.0
PARENT_SPANS = 50


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--children", type=int, default=1)
    parser.add_argument("--exit", choices=("_exit", "sys.exit"), default="_exit")
    parser.add_argument("--busy", action="store_true", help="export continuously while forking")
    parser.add_argument("--fork-after", type=Path, help="fork once this file exists")
    return parser.parse_args()


def child(telemetry, index: int, how: str) -> None:
    from otel_dynamo._recording.structured_log import EventLogger

    tracer = telemetry.tracer_provider.get_tracer("fork_job")
    with tracer.start_as_current_span(f"child-op-{index}"):
        EventLogger(logger_provider=telemetry.logger_provider).emit("child.event", index=index)
    telemetry.meter_provider.get_meter("fork_job").create_counter("child.count").add(1)
    if how == "sys.exit":
        sys.exit(0)  # atexit: the bounded shutdown runs in the child
    telemetry.shutdown(2.0)
    os._exit(0)


def wait_for(pid: int) -> dict:
    started = time.monotonic()
    while time.monotonic() - started < CHILD_DEADLINE_S:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return {
                "pid": pid,
                "ended": True,
                "status": status,
                "seconds": time.monotonic() - started,
            }
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return {"pid": pid, "ended": False, "status": None, "seconds": CHILD_DEADLINE_S}


def wait_for_file(path: Path) -> None:
    started = time.monotonic()
    while not path.exists() and time.monotonic() - started < CHILD_DEADLINE_S:
        time.sleep(0.01)


def keep_busy(telemetry, stop: threading.Event) -> None:
    tracer = telemetry.tracer_provider.get_tracer("fork_job")
    while not stop.is_set():
        for _ in range(20):
            with tracer.start_as_current_span("busy-op"):
                pass
        telemetry.force_flush(1.0)


def main() -> None:
    from otel_dynamo._config.settings import load_settings
    from otel_dynamo._providers.setup import setup_providers
    from otel_dynamo._recording.structured_log import EventLogger

    args = parse_args()
    telemetry = setup_providers(load_settings())
    tracer = telemetry.tracer_provider.get_tracer("fork_job")
    for index in range(PARENT_SPANS):
        with tracer.start_as_current_span("parent-op", attributes={"index": index}):
            pass
    EventLogger(logger_provider=telemetry.logger_provider).emit("parent.event")
    telemetry.meter_provider.get_meter("fork_job").create_counter("parent.count").add(1)
    stop = threading.Event()
    busy = threading.Thread(target=keep_busy, args=(telemetry, stop), daemon=True)
    if args.busy:
        busy.start()
    if args.fork_after is not None:
        wait_for_file(args.fork_after)
    children = []
    for index in range(args.children):
        pid = os.fork()
        if pid == 0:
            child(telemetry, index, args.exit)
        children.append(wait_for(pid))
    stop.set()
    if args.busy:
        busy.join()  # the parent's exit flush then has only what is buffered to export
    print(json.dumps({"parent": os.getpid(), "children": children}), flush=True)


if __name__ == "__main__":
    main()
