"""A job whose break fix only moves its break, for tests/cli/test_try_fixes.py: the
``.item()`` break goes once torch captures scalars, but the branch on that scalar on the
next line then breaks instead (and the code torch resumes after it recompiles per value).
It appends OTEL_DYNAMO_FIX_TRIAL (``first`` where unset) to the file named by its first
argument."""

from __future__ import annotations

import os
import sys

import torch

with open(sys.argv[1], "a", encoding="utf-8") as file:
    file.write(os.environ.get("OTEL_DYNAMO_FIX_TRIAL", "first") + "\n")


@torch.compile(backend="eager")
def normalize(t):
    peak = t.abs().max().item()
    scale = 1.0 / peak if peak > 0 else 1.0
    return t * scale


for shift in range(3):
    print(normalize(torch.arange(5, dtype=torch.float32) - shift).tolist())
