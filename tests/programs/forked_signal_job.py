"""A traced job that forks a child after its first compile; the child waits for a signal.

python forked_signal_job.py READY_FILE

Prints the child's pid, waits for the child, then prints how it ended and, after twice
the watcher's grace period, "parent alive": a signal sent to the child must never reach
the parent's signal watcher through an inherited wakeup pipe.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import torch

READY = Path(sys.argv[1])

torch.compile(lambda x: x.cos() * 2, backend="eager")(torch.ones(3))
child = os.fork()
if child == 0:
    READY.write_text("waiting")
    time.sleep(60)
    os._exit(0)
print(child, flush=True)
_pid, status = os.waitpid(child, 0)
print(f"child ended by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else "exited")
sys.stdout.flush()
time.sleep(2.5)
print("parent alive", flush=True)
