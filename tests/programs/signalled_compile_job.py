"""A job whose compile is stopped by a signal: the backend sleeps until told to go on.

python signalled_compile_job.py READY_FILE [--own-handler] [--stuck-in-c | --gil-held[=S]]

Compiles one function with the eager backend (a finished compile, counted in the
metrics), then another with a backend that writes READY_FILE and waits (at most 120 s). With
``--own-handler`` the job has its own SIGTERM handler (installed before torch), which
lets the compile finish; the job then prints "continued" and exits 0. With
``--stuck-in-c`` the backend waits in C code that never returns to the interpreter (as a
rank blocked in a collective does): the main thread blocks SIGTERM and SIGHUP, so they go
to another thread, and sleeps in the C library. With ``--gil-held`` the backend sleeps in
a C call that holds the GIL (``ctypes.PyDLL``: no Python thread runs meanwhile) and that
no signal interrupts (a second lock of a held mutex, with a timeout of S seconds, default
120), as a rank deadlocked in C code that never released the GIL.
"""

from __future__ import annotations

import ctypes
import signal
import sys
import time
from pathlib import Path

stop = False


def own_handler(signum: int, frame: object) -> None:
    global stop
    stop = True
    print("own handler ran", flush=True)


if "--own-handler" in sys.argv:
    signal.signal(signal.SIGTERM, own_handler)

import torch  # noqa: E402

READY = Path(sys.argv[1])


class Timespec(ctypes.Structure):
    _fields_ = (("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long))


def _deadlock_holding_the_gil(seconds: int) -> None:
    """Lock a mutex this thread already holds, for ``seconds``, without releasing the GIL:
    pthread_mutex_timedlock is never cut short by a signal handler (sleep would be)."""
    libc = ctypes.PyDLL(None)
    mutex = ctypes.create_string_buffer(64)  # zeroed: PTHREAD_MUTEX_INITIALIZER
    libc.pthread_mutex_lock(mutex)
    now = time.time_ns() + seconds * 1_000_000_000
    deadline = Timespec(now // 1_000_000_000, now % 1_000_000_000)
    libc.pthread_mutex_timedlock(mutex, ctypes.byref(deadline))


GIL_HELD = next((arg for arg in sys.argv if arg.startswith("--gil-held")), None)
ARM_WAIT_S = 3.0


def slow_backend(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]):
    if GIL_HELD is not None:
        seconds = int(GIL_HELD.partition("=")[2] or 120)
        READY.write_text("compiling")
        _deadlock_holding_the_gil(seconds)
        return gm.forward
    if "--stuck-in-c" in sys.argv:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGHUP})
        READY.write_text("compiling")
        ctypes.CDLL(None).sleep(120)
    READY.write_text("compiling")
    deadline = time.monotonic() + 120
    while not stop and time.monotonic() < deadline:
        time.sleep(0.05)
    return gm.forward


torch.compile(lambda x: x.cos() * 2, backend="eager")(torch.ones(3))  # one finished compile
if GIL_HELD is not None:
    # A rank deadlocks long after its first compile: the termination sentinel, started
    # with the providers, has armed by then (docs/production.md). On a machine loaded to
    # every core its interpreter took over a second to start.
    time.sleep(ARM_WAIT_S)
compiled = torch.compile(lambda x: x.sin() + 1, backend=slow_backend)
compiled(torch.ones(3))
print("continued", flush=True)
