"""A small real training loop under torch.compile, traced by otel_dynamo: ``otel-dynamo demo``.

It has a deliberate graph break (a print inside forward), a shape recompile (the batch
shrinks halfway through training) and a grad-mode and a dtype recompile (evaluation
without grad, then in float64). Telemetry goes to OTLP/JSON Lines files under
./otel-dynamo/ (no server needed); the script then prints the report of what was
recorded and writes it as an HTML page. The model and loop are in otel_dynamo/cli/demo_training.py.

    python examples/train_traced.py [--backend aot_eager] [--steps 4] [--out ./otel-dynamo]
"""

from __future__ import annotations

import sys

from otel_dynamo.cli import main

if __name__ == "__main__":
    sys.exit(main(["demo", *sys.argv[1:]]))
