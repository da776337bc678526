"""What :func:`setup_providers` hands back: providers, problems, a bounded shutdown.

``shutdown(timeout_s)`` returns within ``timeout_s`` (plus scheduling noise) whatever
the collector does: each part (traces, logs, metrics, Prometheus) shuts down in its own
daemon thread, the exporters' own timeouts are first cut to the budget, and threads
still busy at the deadline are abandoned (they are daemons and cannot hold the process).

Shutdown happens once, in a daemon thread of its own. Every call, the first included,
waits for that one to end, up to its deadline (and its own ``timeout_s``): a second call
(a SIGTERM handler or finalizer arriving while the at-exit flush exports) never returns
before what is being exported is out, so the signal re-raised after it loses nothing. A
``force_flush`` during shutdown waits for the shutdown the same way. A signal whose
handler would run on the main thread inside a shutdown called there is acted on after it
(``termination.held_during``).
"""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry._logs import LoggerProvider, NoOpLoggerProvider

from otel_dynamo._config.settings import DEFAULT_SHUTDOWN_TIMEOUT_SECONDS, ConfigProblem
from otel_dynamo._lifecycle import exit_steps, termination
from otel_dynamo._providers.export_health import ExportHealth, quiet, record_collector
from otel_dynamo._providers.safe_exporters import SafeExport

FLUSH_TIMEOUT_SECONDS = 5.0
CHILD_FLUSH_PRIORITY = 0
"""``multiprocessing.util.Finalize`` priority of a child's flush: 0 is the lowest that
``Process._bootstrap`` still runs before ``os._exit`` (after the user's own, higher ones)."""
Part = Callable[[float], Any]
"""Shuts one piece down within the given seconds."""


class ProcessProviders:
    """The tracer, logger and meter providers of this process and how to stop them."""

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider,
        logger_provider: LoggerProvider,
        meter_provider: metrics.MeterProvider,
        problems: Sequence[ConfigProblem] = (),
        output_dir: Path | None = None,
        prometheus_url: str | None = None,
        pull_readers: bool = False,
        shutdown_timeout_s: float = DEFAULT_SHUTDOWN_TIMEOUT_SECONDS,
        parts: Iterable[Part] = (),
        safe_exports: Iterable[SafeExport] = (),
        health: ExportHealth | None = None,
        destinations: Mapping[str, str] | None = None,
        disabled: bool = False,
    ) -> None:
        self.tracer_provider = tracer_provider
        self.logger_provider = logger_provider
        self.meter_provider = meter_provider
        self.problems = tuple(problems)
        self.output_dir = output_dir
        self.prometheus_url = prometheus_url
        self.pull_readers = pull_readers or prometheus_url is not None
        """Metrics are read by a scraper (Prometheus): a flush only queues a snapshot."""
        self.shutdown_timeout_s = shutdown_timeout_s
        self.destinations = dict(destinations or {})
        """Where each signal built goes, in words with secrets redacted ("files in DIR")."""
        self.disabled = disabled
        """OTEL_SDK_DISABLED turned everything off."""
        self._parts = tuple(parts)
        self._safe_exports = tuple(safe_exports)
        self._health = health or ExportHealth()
        self._lock = threading.Lock()
        self._shutdown_done: threading.Event | None = None
        """Set when the one shutdown has ended (None: not begun)."""
        self._shutdown_deadline = 0.0
        self._shutdown_finished = False

    @classmethod
    def noop(
        cls,
        *,
        problems: Sequence[ConfigProblem] = (),
        destinations: Mapping[str, str] | None = None,
        disabled: bool = False,
    ) -> ProcessProviders:
        return cls(
            tracer_provider=trace.NoOpTracerProvider(),
            logger_provider=NoOpLoggerProvider(),
            meter_provider=metrics.NoOpMeterProvider(),
            problems=problems,
            destinations=destinations,
            disabled=disabled,
        )

    def redact(self, text: str) -> str:
        """``text`` with this process's secrets (OTLP header values, endpoint user-info and
        query values) and secret-shaped URL parts as ``***``."""
        return self._health.redact(text)

    def register_at_exit(self, *, flush_on_signal: bool = False) -> None:
        """Flush at exit, at the end of each multiprocessing child (a DataLoader worker),
        which leaves with ``os._exit``, and, with ``flush_on_signal``, on SIGTERM/SIGHUP,
        which skip ``atexit`` (see ``signals``).

        Built in a ``multiprocessing`` child itself (a worker whose first compile comes
        after the fork, or a spawned one), the child's own flush is registered now; built
        before, in each child as it starts."""
        atexit.register(self._at_exit)
        if flush_on_signal:
            termination.install(self._on_signal, budget_s=self.shutdown_timeout_s)
        import multiprocessing
        import multiprocessing.util

        # Runs in the child after multiprocessing has cleared the parent's finalizers.
        multiprocessing.util.register_after_fork(self, ProcessProviders._flush_at_child_exit)
        if multiprocessing.parent_process() is not None:
            self._flush_at_child_exit()

    def _flush_at_child_exit(self) -> None:
        import multiprocessing.util

        # Process._bootstrap runs these finalizers after run(), just before os._exit.
        multiprocessing.util.Finalize(None, self._at_exit, exitpriority=CHILD_FLUSH_PRIORITY)

    def _at_exit(self) -> None:
        self.shutdown(self.shutdown_timeout_s)

    def _on_signal(self, ending: bool) -> None:
        if ending:
            self.shutdown(self.shutdown_timeout_s)
        else:  # the handler we chain to may let the process go on
            self.force_flush(self.shutdown_timeout_s)

    def shutdown(self, timeout_s: float | None = None) -> bool:
        """Flush what can be flushed and stop, never taking longer than ``timeout_s``.

        Returns True when everything stopped in time. The work is done once; a later call
        (from a signal handler, a finalizer, another thread) waits for the one in progress
        until that one's deadline, at most ``timeout_s``, and returns whether it finished.
        """
        with termination.held_during():
            return self._shutdown(timeout_s)

    def _shutdown(self, timeout_s: float | None) -> bool:
        budget = self.shutdown_timeout_s if timeout_s is None else max(0.0, timeout_s)
        with self._lock:
            done = self._shutdown_done
            first = done is None
            if done is None:
                done = self._shutdown_done = threading.Event()
                self._shutdown_deadline = time.monotonic() + budget
        if first:
            atexit.unregister(self._at_exit)
            if not _start_daemon(self._shut_down, name="otel_dynamo-shutdown"):
                self._shut_down()  # no new threads at interpreter shutdown: run it here
        finished = self._wait_for_shutdown(done, budget)
        if first and not finished:
            self._health.warn_once(self._timed_out_message(budget))
        return finished

    def _shut_down(self) -> None:
        """The one shutdown: settle, hurry the exporters, stop every part by the deadline."""
        done = self._shutdown_done
        try:
            exit_steps.settle(final=True)  # deferred work (device timings) ends in this flush
            remaining = max(0.0, self._shutdown_deadline - time.monotonic())
            for safe_export in self._safe_exports:
                safe_export.close(remaining)
            calls = [_with_budget(part, remaining) for part in self._parts]
            self._shutdown_finished = run_parallel(calls, remaining)
        except Exception:  # shutdown trouble is never the job's problem
            self._shutdown_finished = False
        finally:
            if done is not None:
                done.set()

    def _wait_for_shutdown(self, done: threading.Event, budget: float) -> bool:
        """Wait for the shutdown in progress, until its deadline and at most ``budget``."""
        wait_s = min(budget, self._shutdown_deadline - time.monotonic())
        return done.wait(max(0.0, wait_s)) and self._shutdown_finished

    def _timed_out_message(self, budget: float) -> str:
        targets = sorted(
            {f"{safe_export.signal} to {safe_export.target}" for safe_export in self._safe_exports}
        )
        return (
            f"otel_dynamo: telemetry shutdown did not finish within {budget:g} s; what was "
            f"still unsent was dropped (exporting {', '.join(targets) or 'nothing'}). Raise "
            "OTEL_DYNAMO_SHUTDOWN_TIMEOUT if the collector is slow but alive, or the machine "
            "too busy at exit to write it in time"
        )

    def force_flush(self, timeout_s: float = FLUSH_TIMEOUT_SECONDS) -> bool:
        """Export everything buffered now, within ``timeout_s``; True if all finished.

        During shutdown: wait for it instead (within ``timeout_s``), which exports all."""
        done = self._shutdown_done
        if done is not None:
            return self._wait_for_shutdown(done, max(0.0, timeout_s))
        exit_steps.settle(final=False)
        millis = int(timeout_s * 1000)
        results: list[object] = []
        providers = (self.tracer_provider, self.logger_provider, self.meter_provider)
        calls = [_flush(provider, millis, results) for provider in providers]
        finished = run_parallel(calls, timeout_s)
        return finished and len(results) == len(calls) and all(results)


def _start_daemon(call: Callable[[], None], *, name: str) -> bool:
    """Start ``call`` in a daemon thread; False where no thread can start (at
    interpreter shutdown, Python >= 3.12)."""
    try:
        threading.Thread(target=call, name=name, daemon=True).start()
    except RuntimeError:
        return False
    return True


def _with_budget(part: Part, budget: float) -> Callable[[], Any]:
    return lambda: part(budget)


def _flush(provider: object, millis: int, results: list[object]) -> Callable[[], None]:
    def call() -> None:
        flush = getattr(provider, "force_flush", None)
        results.append(True if flush is None else flush(millis))

    return call


def run_parallel(calls: Sequence[Callable[[], Any]], timeout_s: float) -> bool:
    """Run each call in its own daemon thread; True if all ended within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    threads = []
    for call in calls:
        thread = threading.Thread(target=_quietly(call), name="otel_dynamo-shutdown", daemon=True)
        try:
            thread.start()
        except RuntimeError:  # no new threads at interpreter shutdown (Python >= 3.12)
            _quietly(call)()
            continue
        threads.append(thread)
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return not any(thread.is_alive() for thread in threads)


def _quietly(call: Callable[[], Any]) -> Callable[[], None]:
    def run() -> None:
        try:
            with quiet(record_collector([])):
                call()
        except Exception:  # shutdown trouble is never the job's problem
            pass

    return run
