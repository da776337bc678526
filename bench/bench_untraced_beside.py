"""An untraced torch.compile beside a traced one: does it pay for telemetry? Prints the ratio.

    python bench/bench_untraced_beside.py [--rounds 3] [--compiles 15]

Two kinds of child process alternate (ABAB): a plain one, which never imports otel_dynamo,
and one where a traced backend was built and has compiled. Each times cold compiles
(first call, forward and backward; ``torch._dynamo.reset()`` before each) of the same
model with the plain ``aot_eager`` backend and prints its median. Frame events are routed
to the recorder of the backend that compiles the frame, so the untraced compiles should
cost the same in both (ratio about 1.00x); a process-wide recorder would make them pay
for reading Dynamo's guards, phases and metrics.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

CHILD = """
import statistics, sys, time, torch
if sys.argv[1] == "beside":
    import otel_dynamo
    from opentelemetry.sdk.trace import TracerProvider
    traced = otel_dynamo.traced("aot_eager", tracer_provider=TracerProvider())
    torch.compile(lambda x: x * 2, backend=traced)(torch.ones(2))
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
    torch.nn.Linear(64, 8),
)
x = torch.randn(16, 64)
times = []
for _ in range(int(sys.argv[2])):
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="aot_eager")
    start = time.perf_counter()
    compiled(x).sum().backward()
    times.append(time.perf_counter() - start)
print(statistics.median(times))
"""


def median_compile_s(kind: str, compiles: int) -> float:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, kind, str(compiles)],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="ABAB rounds (default 3)")
    parser.add_argument("--compiles", type=int, default=15, help="compiles per process")
    args = parser.parse_args()
    plain, beside = [], []
    for _ in range(args.rounds):
        plain.append(median_compile_s("plain", args.compiles))
        beside.append(median_compile_s("beside", args.compiles))
    p, b = statistics.median(plain), statistics.median(beside)
    print(
        f"untraced aot_eager cold compile, median of {args.rounds} processes x {args.compiles}: "
        f"plain {p * 1000:.1f} ms, beside a traced backend {b * 1000:.1f} ms, "
        f"ratio {b / p:.3f}x"
    )


if __name__ == "__main__":
    main()
