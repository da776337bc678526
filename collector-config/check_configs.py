#!/usr/bin/env python3
"""Check otel_dynamo's Collector configs without a Collector binary.

    python collector-config/check_configs.py                 # the shipped configs
    python collector-config/check_configs.py my-config.yaml  # any config

Schema, component allow-list of the pinned otelcol-contrib, pipeline cross-references,
${env:...} references, secrets, and that every attribute/span/event name a processor uses
is one otel_dynamo emits (otel_dynamo/names.py) or a standard one.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "grafana")]

from dashgen import catalog, standard  # noqa: E402
from otelcol_check.model import shipped  # noqa: E402
from otelcol_check.report import KnownNames, check_file  # noqa: E402


def known_names() -> KnownNames:
    """Attribute, span and span-event names otel_dynamo emits, plus standard attributes."""
    return KnownNames(
        attributes=catalog.values("ATTR_", "RESOURCE_") | standard.SEMCONV_RESOURCE,
        span_names=catalog.values("SPAN_"),
        event_names=catalog.values("EVENT_"),
    )


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or list(shipped().values())
    failed = 0
    for path in paths:
        problems = check_file(path, known_names())
        for problem in problems:
            print(f"{path}: {problem}")
        failed += bool(problems)
        if not problems:
            print(f"{path}: ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
