"""The signal watcher: woken by Python's C-level handler through the wakeup fd, never
taking a wakeup fd someone else holds, giving it back when stopped."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from otel_dynamo._providers import signal_sentinel, signal_wakeup, signals


@pytest.fixture(autouse=True)
def _no_wakeup_fd_held():
    """Providers set up in this process by earlier tests hold the wakeup fd: let it go."""
    signals.reset()


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

    watcher = signal_wakeup.Watcher(record)
    assert watcher.start() is True
    try:
        os.kill(os.getpid(), signal.SIGUSR1)
        assert arrived.wait(10)
    finally:
        watcher.stop()
    assert woken == [(int(signal.SIGUSR1), "otel_dynamo-signal-watch")]


def test_stopping_gives_the_wakeup_fd_back():
    """After stop() no wakeup fd is set: the process is as it was."""
    watcher = signal_wakeup.Watcher(lambda signum: None)
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
        assert signal_wakeup.Watcher(lambda signum: None).start() is False
        assert signal.set_wakeup_fd(-1) == write_fd
    finally:
        signal.set_wakeup_fd(-1)
        os.close(read_fd)
        os.close(write_fd)


def test_with_a_sentinel_a_caught_signal_is_relayed_to_the_watcher(sigusr1_caught):
    """With the sentinel at the other end of the wakeup channel, os.kill(SIGUSR1) still
    reaches the watcher's callback on its own thread; stop() ends the sentinel."""
    woken: list[int] = []
    arrived = threading.Event()

    def record(signum: int) -> None:
        woken.append(signum)
        arrived.set()

    watcher = signal_wakeup.Watcher(record, sentinel_signals=[signal.SIGUSR1])
    assert watcher.start() is True
    try:
        assert watcher.sentinel_running
        os.kill(os.getpid(), signal.SIGUSR1)
        assert arrived.wait(10)
    finally:
        watcher.stop()
    assert woken == [int(signal.SIGUSR1)]
    assert not watcher.sentinel_running


def test_a_handler_reset_on_delivery_leaves_the_default_action_after_one_signal():
    """reset_on_delivery: SIGUSR2's Python handler runs once, after which the kernel's
    disposition is the default action (what the sentinel checks before it signals);
    while a handler is set, the sentinel sees a signal the job handles itself."""
    ran = threading.Event()
    previous = signal.signal(signal.SIGUSR2, lambda signum, frame: ran.set())
    try:
        assert not signal_sentinel.default_action(os.getpid(), signal.SIGUSR2)
        assert signal_wakeup.reset_on_delivery(signal.SIGUSR2) is True
        os.kill(os.getpid(), signal.SIGUSR2)
        assert ran.wait(10)
        assert signal_sentinel.default_action(os.getpid(), signal.SIGUSR2)
    finally:
        signal.signal(signal.SIGUSR2, previous)
