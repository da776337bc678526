"""A job with two causes otel-dynamo run --try-fixes can fix (a dimension that changes
between calls, a print inside the compiled function), for tests/cli/test_try_fixes.py.

It appends OTEL_DYNAMO_FIX_TRIAL (``first`` where unset) to the file named by its first
argument: a re-run repeats the job's side effects, and the job can tell it is one.
``--print-size``: the print also prints a ``torch.Size``, which torch cannot reorder (that
fix does not work). ``--slow-fixes S``: a re-run with a fix sleeps S seconds first.
``--heavier-fixes N``: a re-run with a fix calls the compiled function on N times as many
rows (its compiled graphs run longer) and prints the same numbers."""

from __future__ import annotations

import argparse
import os
import time

import torch

parser = argparse.ArgumentParser()
parser.add_argument("trials")
parser.add_argument("--print-size", action="store_true")
parser.add_argument("--slow-fixes", type=float, default=0.0)
parser.add_argument("--heavier-fixes", type=int, default=1)
args = parser.parse_args()
trial = os.environ.get("OTEL_DYNAMO_FIX_TRIAL", "first")
with open(args.trials, "a", encoding="utf-8") as file:
    file.write(trial + "\n")
scale = 1
if trial.startswith("fix"):
    time.sleep(args.slow_fixes)
    scale = args.heavier_fixes


@torch.compile(backend="eager")
def step(x, w):
    y = (x * w).sum(0)
    if args.print_size:
        print("summed", y.shape)
    else:
        print("summed")
    return y + 1


for rows in (4, 8, 12):
    summed = step(torch.ones(rows * scale, 3), torch.ones(3))
    print(((summed - 1) / scale + 1).tolist())
