"""Steady-state cost of tracing on a launch-bound training step on CUDA: traced / plain.

    python bench/bench_gpu.py [--pairs 12] [--steps 4000] [--mode default|reduce-overhead] [--aa]

The step, the alternating pairs of fresh processes and the verdict are those of
``bench/bench_launch_bound.py`` (same options), with the model and its inputs on the GPU:
stacked Linear + LayerNorm + GELU blocks trained with AdamW (``foreach=False``: a dozen
small kernels per parameter) under ``torch.compile``. The step itself never synchronizes
(no ``.item()``; the steps run under ``torch.cuda.set_sync_debug_mode("warn")`` and the
warnings are counted). Each step is timed by CUDA events recorded at its start (the
stream's pace, which is the host's launch pace when the step is launch-bound); the whole
loop between two ``torch.cuda.synchronize()`` calls and the host's own time per step are
reported beside it. Target: traced / plain <= 1.01x.

Where CUDA is not available it prints one line saying it is skipped and why, and exits 0.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_launch_bound  # the step, the child and the parent, shared

SKIP_PREFIX = "bench_gpu: skipped:"


def cuda_unavailable_reason() -> str | None:
    """Why this process cannot run the GPU bench, or None when it can."""
    try:
        import torch
    except ImportError as error:
        return f"torch is not importable ({error})"
    if not torch.backends.cuda.is_built():
        return f"torch {torch.__version__} is built without CUDA"
    if not torch.cuda.is_available():
        return f"no CUDA device is available to torch {torch.__version__}"
    return None


def main(argv: Sequence[str] | None = None) -> None:
    arguments = sys.argv[1:] if argv is None else list(argv)
    if not any(flag in arguments for flag in ("-h", "--help")):
        reason = cuda_unavailable_reason()
        if reason is not None:
            print(f"{SKIP_PREFIX} {reason}")
            return
    bench_launch_bound.main(arguments, device="cuda", doc=__doc__)


if __name__ == "__main__":
    main()
