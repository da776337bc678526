"""End to end on real models: a whole compile-heavy job, traced vs plain. Prints ratios.

    python bench/bench_real_models.py [--pairs 5] [--models gpt2,llama,bert,model_and_loss]
                                      [--backend aot_eager] [--capture stacks,values,graphs]

Each job is ``tests/programs/real_model_job.py`` run without taking ground truth (Hugging
Face models, tiny configs built in code, random init): GPT-2 trained with a shape change,
Llama ``generate()``, BERT at changing batch sizes, a model and its loss compiled apart.
One pair is two fresh processes run back to back, plain then traced or traced then plain
(alternating by pair), each with its own empty inductor cache and both with the same
random ``PYTHONHASHSEED``: string hashing orders the sets and dicts Dynamo and sympy iterate,
so the seed alone moves a plain GPT-2 job by about 2 % (11.44 s with one seed, 11.64 s with
another, each reproduced); a pair that shares it compares the same work. The traced one has
``OTEL_DYNAMO_ENABLED=true`` and writes its telemetry files (the embedded default); the
plain one loads only what any process with otel-dynamo installed loads (the .pth hook and,
at ``torch._dynamo`` import, the ``list_backends`` wrapper: ~3 ms). ``--capture`` sets the
traced one's ``OTEL_DYNAMO_CAPTURE`` (the cost of graph texts, say). Wall time is the whole process,
start-up and exit flush included. The ratio is the median over the pairs of traced / plain.

``--room-baseline`` adds a third process to each pair: the plain job with its frame
compiles given the frame-stack room a traced job's get (``bench/plain_with_room.py``).
The room spares a compile CPython's frame-stack chunk thrashing, which the plain job pays,
so traced / plain is what a user sees and traced / plain-with-room otel_dynamo's own cost.

Bytecode: an installed otel_dynamo has its ``.pyc`` files (pip compiles them); a checkout
under ``PYTHONDONTWRITEBYTECODE`` would compile its sources in every process. So every run
shares one temporary ``PYTHONPYCACHEPREFIX``, and an untimed plain and traced run per
model fill it first.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROGRAM = Path(__file__).resolve().parents[1] / "tests" / "programs" / "real_model_job.py"
ROOM_RUNNER = Path(__file__).resolve().with_name("plain_with_room.py")
MODELS = ("gpt2", "llama", "bert", "model_and_loss")
MAX_HASH_SEED = 4294967295
"""The largest PYTHONHASHSEED Python accepts."""
BASELINE_NAMES = {"plain": "plain", "room": "plain with room"}
"""What each ratio divides the traced job's time by, as printed."""

PYCACHE = tempfile.mkdtemp(prefix="otel-dynamo-bench-pycache-")


def run_job(
    model: str,
    backend: str,
    *,
    traced: bool,
    hash_seed: int,
    capture: str | None = None,
    room: bool = False,
) -> float:
    """Seconds one fresh process takes to run the job (``room``: a plain job whose frame
    compiles get the traced job's frame-stack room)."""
    with tempfile.TemporaryDirectory(prefix="otel-dynamo-bench-") as directory:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("OTEL_", "TORCH_TRACE", "TORCH_LOGS", "PYTHONDONTWRITE"))
        }
        env["PYTHONPYCACHEPREFIX"] = PYCACHE
        env["PYTHONHASHSEED"] = str(hash_seed)
        env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(directory, "inductor-cache")
        if traced:
            env["OTEL_DYNAMO_ENABLED"] = "true"
            env["OTEL_DYNAMO_OUTPUT_DIR"] = os.path.join(directory, "telemetry")
            if capture is not None:
                env["OTEL_DYNAMO_CAPTURE"] = capture
        runner = [str(ROOM_RUNNER)] if room and not traced else []
        command = [sys.executable, *runner, str(PROGRAM), model, backend, "-"]
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True, timeout=900)
        seconds = time.perf_counter() - start
        if traced and not any(Path(env["OTEL_DYNAMO_OUTPUT_DIR"]).glob("traces-*")):
            # a broken install makes OTEL_DYNAMO_ENABLED a no-op: two plain runs, ratio 1.0
            sys.exit(f"bench: traced {model} job wrote no trace file; is otel_dynamo importable?")
        return seconds


def ratios(
    model: str, backend: str, pairs: int, capture: str | None = None, room_baseline: bool = False
) -> dict[str, list[float]]:
    """traced / plain per pair ("plain"), and traced / plain-with-room if asked ("room")."""
    kinds = ["plain", "traced", *(["room"] if room_baseline else [])]
    for kind in kinds:  # fill the bytecode cache, untimed
        run_job(
            model,
            backend,
            traced=kind == "traced",
            hash_seed=0,
            capture=capture,
            room=kind == "room",
        )
    found: dict[str, list[float]] = {kind: [] for kind in kinds if kind != "traced"}
    for pair in range(pairs):
        seed = random.randrange(MAX_HASH_SEED + 1)
        order = kinds if pair % 2 == 0 else kinds[::-1]
        seconds = {
            kind: run_job(
                model,
                backend,
                traced=kind == "traced",
                hash_seed=seed,
                capture=capture,
                room=kind == "room",
            )
            for kind in order
        }
        for kind, values in found.items():
            values.append(seconds["traced"] / seconds[kind])
        print(
            f"  {model} pair {pair + 1} (PYTHONHASHSEED={seed}): "
            + ", ".join(f"{kind} {seconds[kind]:.2f} s" for kind in kinds),
            flush=True,
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=5, help="traced/plain pairs (default 5)")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated")
    parser.add_argument("--backend", default="aot_eager", help="aot_eager (default), inductor")
    parser.add_argument("--capture", default=None, help="OTEL_DYNAMO_CAPTURE of the traced runs")
    parser.add_argument(
        "--room-baseline",
        action="store_true",
        help="also run each job plain with the traced job's frame-stack room",
    )
    args = parser.parse_args()
    summary = []
    try:
        for model in args.models.split(","):
            found = ratios(model, args.backend, args.pairs, args.capture, args.room_baseline)
            summary.append((model, found))
    finally:
        shutil.rmtree(PYCACHE, ignore_errors=True)
    capture = f", OTEL_DYNAMO_CAPTURE={args.capture}" if args.capture else ""
    print(f"\n{args.backend}{capture}, median of {args.pairs} pairs (whole process):")
    for model, found in summary:
        for kind, values in found.items():
            median, low, high = statistics.median(values), min(values), max(values)
            print(
                f"  {model:16s} traced / {BASELINE_NAMES[kind]:16s} "
                f"{median:.3f}x  (pairs {low:.3f}x .. {high:.3f}x)"
            )


if __name__ == "__main__":
    main()
