"""Deferred work and the process's end: steps before the flush, the poller, and pending
device timings ended and exported when SIGTERM ends a traced job."""

from __future__ import annotations

import gc
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from _export_support import REPO_ROOT, child_environ

from otel_dynamo import names
from otel_dynamo._lifecycle import exit_steps
from otel_dynamo._lifecycle.poller import Poller
from otel_dynamo.report import load_telemetry


class Steps:
    """Records what it was told, in a shared list."""

    def __init__(self, label: str, told: list[tuple[str, bool]]) -> None:
        self.label = label
        self.told = told

    def settle(self, final: bool) -> None:
        self.told.append((self.label, final))

    def fail(self, final: bool) -> None:
        raise RuntimeError("a step that fails")


def test_steps_run_in_order_and_a_failing_one_is_skipped() -> None:
    """settle() runs registered steps in order, tells them whether the flush is the last,
    and goes on past one that raises."""
    told: list[tuple[str, bool]] = []
    first, second = Steps("first", told), Steps("second", told)
    exit_steps.before_flush(first.settle)
    exit_steps.before_flush(second.fail)
    exit_steps.before_flush(second.settle)
    exit_steps.settle(final=False)
    assert told == [("first", False), ("second", False)]


def test_a_step_whose_owner_is_gone_is_not_run() -> None:
    """Registration is weak: a collected owner's step is skipped, not kept alive."""
    told: list[tuple[str, bool]] = []
    exit_steps.before_flush(Steps("gone", told).settle)
    gc.collect()
    exit_steps.settle(final=True)
    assert told == []


class Counting:
    """Pending work the test controls: poll() counts calls and says what is left."""

    def __init__(self, pending: int) -> None:
        self.pending = pending
        self.polls = 0
        self.done = threading.Event()

    def poll(self) -> bool:
        self.polls += 1
        self.pending = max(0, self.pending - 1)
        if not self.pending:
            self.done.set()
        return self.pending > 0


def test_the_poller_polls_until_nothing_is_pending_then_sleeps() -> None:
    """After a kick the poller polls while work is pending, then stops polling."""
    work = Counting(pending=3)
    poller = Poller(work.poll, name="test-poller", interval_s=0.001)
    poller.kick()
    assert work.done.wait(5)
    time.sleep(0.05)
    assert work.polls == 3


def test_the_pollers_thread_ends_with_its_owner() -> None:
    """A collected owner: the thread notices at its next wake and ends."""
    work = Counting(pending=1)
    poller = Poller(work.poll, name="test-poller-owner", interval_s=0.001)
    poller.kick()
    assert work.done.wait(5)
    thread = poller._thread
    assert thread is not None
    del work
    gc.collect()
    poller.kick()  # wakes it: the owner is gone
    thread.join(5)
    assert not thread.is_alive()


SIGTERMED_JOB = f"""
import os, signal, sys, time
sys.path[:0] = [{str(REPO_ROOT / "tests")!r}, {str(REPO_ROOT / "tests" / "recording")!r}]
import torch
torch.compile(lambda x: x + 1)(torch.ones(1))  # the job's own providers are set up
from otel_dynamo._providers.choice import own_providers_if_built
from otel_dynamo._config.run_span_policy import RunSpanPolicy
from otel_dynamo._config.settings import Settings
from otel_dynamo._recording.recorder import Recorder
from test_device_time import StandInClock, _device_run
recorder = Recorder(
    tracer=own_providers_if_built().tracer_provider.get_tracer("job"),
    settings=Settings(enabled=True, run_spans=RunSpanPolicy.parse("all")),
)
_device_run(recorder, StandInClock(), device_ms=1.0)  # the device never finishes it
os.kill(os.getpid(), signal.SIGTERM)
time.sleep(30)
"""


def test_sigterm_ends_pending_device_timings_in_the_flush(tmp_path: Path) -> None:
    """A traced job ended by SIGTERM with a run still waiting for the device: the job ends
    by the signal, and its run span is in the files, ended as process_exit."""
    environ = child_environ(
        OTEL_DYNAMO_ENABLED="true", OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path / "telemetry")
    )
    done = subprocess.run(
        [sys.executable, "-c", SIGTERMED_JOB],
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -signal.SIGTERM, done.stderr[-2000:]
    spans = load_telemetry([tmp_path / "telemetry"]).spans
    (run,) = [span for span in spans if span.name == names.SPAN_RUN_FORWARD]
    assert run.attributes[names.ATTR_RUN_DEVICE_DROP_REASON] == names.DROP_PROCESS_EXIT
