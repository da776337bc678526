"""The signal watcher: woken by Python's C-level handler through the wakeup fd, never
taking a wakeup fd someone else holds, giving it back when stopped."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from otel_dynamo._lifecycle import (
    dispositions,
    termination,
    termination_sentinel,
    termination_watch,
)


@pytest.fixture(autouse=True)
def _no_wakeup_fd_held():
    """Providers set up in this process by earlier tests hold the wakeup fd: let it go."""
    termination.reset()


@pytest.fixture
def sigusr1_caught():
    """A Python-level handler for SIGUSR1, so the C-level handler writes to the wakeup fd."""
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: None)
    yield
    signal.signal(signal.SIGUSR1, previous)


def test_a_caught_signal_wakes_the_watcher_with_its_number(sigusr1_caught):
    """os.kill(SIGUSR1) reaches the watcher's callback, on the watcher's own thread."""
    woken: list[tuple[int, str]] = []
    arrived = threading.Event()

    def record(signum: int) -> None:
        woken.append((signum, threading.current_thread().name))
        arrived.set()

    watcher = termination_watch.Watcher(record)
    assert watcher.start() is True
    try:
        os.kill(os.getpid(), signal.SIGUSR1)
        assert arrived.wait(10)
    finally:
        watcher.stop()
    assert woken == [(int(signal.SIGUSR1), "otel_dynamo-termination-watch")]


def test_stopping_gives_the_wakeup_fd_back():
    """After stop() no wakeup fd is set: the process is as it was."""
    watcher = termination_watch.Watcher(lambda signum: None)
    assert watcher.start() is True
    watcher.stop()
    assert signal.set_wakeup_fd(-1) == -1


def test_a_wakeup_fd_held_by_someone_else_is_left_to_them():
    """Where an asyncio loop (or anyone) holds the wakeup fd, start() says False and the
    holder's fd is still the one set."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    signal.set_wakeup_fd(write_fd)
    try:
        assert termination_watch.Watcher(lambda signum: None).start() is False
        assert signal.set_wakeup_fd(-1) == write_fd
    finally:
        signal.set_wakeup_fd(-1)
        os.close(read_fd)
        os.close(write_fd)


class Recorded:
    """What a watcher told us: signals woken for, the sentinel's comings and goings."""

    def __init__(self) -> None:
        self.woken: list[tuple[int, str]] = []
        self.sentinel: list[bool] = []
        self.arrived = threading.Event()
        self.changed = threading.Event()

    def wake(self, signum: int) -> None:
        self.woken.append((signum, threading.current_thread().name))
        self.arrived.set()

    def sentinel_changed(self, running: bool) -> None:
        self.sentinel.append(running)
        self.changed.set()


@pytest.fixture
def sentinel_watcher():
    """A started watcher with a sentinel guarding SIGUSR1 (acknowledged as not ours)."""
    recorded = Recorded()
    watcher = termination_watch.Watcher(
        recorded.wake,
        acknowledge=lambda signum: termination_sentinel.NOT_OURS,
        sentinel_changed=recorded.sentinel_changed,
        sentinel_signals=[signal.SIGUSR1],
    )
    assert watcher.start() is True
    yield watcher, recorded
    watcher.stop()


def test_a_sentinel_says_it_runs(sentinel_watcher):
    """The sentinel's first record reaches the watcher: sentinel_changed(True)."""
    watcher, recorded = sentinel_watcher
    assert watcher.sentinel is not None
    assert recorded.changed.wait(10)
    assert recorded.sentinel == [True]


def test_with_a_sentinel_a_caught_signal_is_relayed_to_the_watcher(
    sigusr1_caught, sentinel_watcher
):
    """os.kill(SIGUSR1) goes to the sentinel and back: the watcher's callback gets it, on
    the watcher's own thread."""
    _watcher, recorded = sentinel_watcher
    os.kill(os.getpid(), signal.SIGUSR1)
    assert recorded.arrived.wait(10)
    assert recorded.woken == [(int(signal.SIGUSR1), "otel_dynamo-termination-watch")]


def test_stopping_the_watcher_ends_its_sentinel():
    """stop() ends the sentinel process and reaps it."""
    watcher = termination_watch.Watcher(lambda signum: None, sentinel_signals=[signal.SIGUSR1])
    assert watcher.start() is True
    sentinel = watcher.sentinel
    assert sentinel is not None and sentinel.poll() is None
    watcher.stop()
    assert sentinel.returncode is not None


def test_a_watcher_whose_sentinel_dies_reads_the_channel_itself(sigusr1_caught, sentinel_watcher):
    """The sentinel killed: sentinel_changed(False), and a caught signal still wakes the
    watcher (it reads the sentinel's end of the pair), without an error on stderr."""
    watcher, recorded = sentinel_watcher
    assert recorded.changed.wait(10)
    recorded.changed.clear()
    watcher.sentinel.kill()
    assert recorded.changed.wait(10)
    assert recorded.sentinel == [True, False]
    os.kill(os.getpid(), signal.SIGUSR1)
    assert recorded.arrived.wait(10)
    assert [signum for signum, _thread in recorded.woken] == [int(signal.SIGUSR1)]


def test_a_handler_reset_on_delivery_leaves_the_default_action_after_one_signal():
    """reset_on_delivery: SIGUSR2's Python handler runs once, after which the kernel's
    disposition is the default action, what the sentinel reads before it signals."""
    ran = threading.Event()
    previous = signal.signal(signal.SIGUSR2, lambda signum, frame: ran.set())
    try:
        assert dispositions.reset_on_delivery(signal.SIGUSR2) is True
        os.kill(os.getpid(), signal.SIGUSR2)
        assert ran.wait(10)
        assert termination_sentinel.default_action(os.getpid(), signal.SIGUSR2)
    finally:
        dispositions.forget(signal.SIGUSR2)
        signal.signal(signal.SIGUSR2, previous)


def test_a_rearmed_handler_catches_the_next_signal_too():
    """rearm after a delivery: the handler is set again (a second SIGUSR2 runs it rather
    than taking the default action), still resetting on delivery."""
    count: list[int] = []
    once, twice = threading.Event(), threading.Event()

    def handler(signum: int, frame: object) -> None:
        count.append(signum)
        dispositions.rearm(signum)
        (once if len(count) == 1 else twice).set()

    previous = signal.signal(signal.SIGUSR2, handler)
    try:
        assert dispositions.reset_on_delivery(signal.SIGUSR2) is True
        os.kill(os.getpid(), signal.SIGUSR2)
        assert once.wait(10)
        assert not termination_sentinel.default_action(os.getpid(), signal.SIGUSR2)
        os.kill(os.getpid(), signal.SIGUSR2)
        assert twice.wait(10)
    finally:
        dispositions.forget(signal.SIGUSR2)
        signal.signal(signal.SIGUSR2, previous)


def test_a_handler_the_job_set_is_never_the_default_action():
    """While a Python handler is set for SIGUSR2, the sentinel would leave SIGUSR2 alone."""
    previous = signal.signal(signal.SIGUSR2, lambda signum, frame: None)
    try:
        assert not termination_sentinel.default_action(os.getpid(), signal.SIGUSR2)
    finally:
        signal.signal(signal.SIGUSR2, previous)
