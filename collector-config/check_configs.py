#!/usr/bin/env python3
"""Check otel_dynamo's Collector configs: the real Collector's verdict, and ours.

    python collector-config/check_configs.py                 # the shipped configs
    python collector-config/check_configs.py my-config.yaml  # any config
    python collector-config/check_configs.py your.yaml add-to-your-collector.yaml --merged

Each file goes to the Collector built from collector-config/build (``validate``: every
key, component, pipeline and OTTL statement), where it was built
(``bash collector-config/build/build.sh``; it needs Go), then through the checks no
Collector makes: no secret written in the file, every ``${env:...}`` reference with one
default, and every attribute, span or event name a processor matches on one otel_dynamo
emits (otel_dynamo/names.py) or a standard one. ``--merged`` validates the files as one
config, merged in order as ``otelcol --config A --config B`` merges them. Needs PyYAML.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "grafana")]
sys.path.append(str(HERE.parent))  # otel_dynamo.names from this checkout where none is installed
try:
    import yaml  # noqa: F401  # read by otelcol_check; said here, before any traceback
except ImportError:
    sys.exit(
        f"check_configs.py needs PyYAML, which {sys.executable} lacks: run it with the quick "
        "start's .venv/bin/python (quickstart.sh installs it), or pip install PyYAML"
    )

from dashgen import catalog, standard  # noqa: E402
from otelcol_check.collector import built_collector, validate  # noqa: E402
from otelcol_check.model import shipped  # noqa: E402
from otelcol_check.report import KnownNames, check_file  # noqa: E402

MERGED_FLAG = "--merged"


def known_names() -> KnownNames:
    """Attribute, span and span-event names otel_dynamo emits, plus standard attributes."""
    return KnownNames(
        attributes=catalog.values("ATTR_", "RESOURCE_") | standard.SEMCONV_RESOURCE,
        span_names=catalog.values("SPAN_"),
        event_names=catalog.values("EVENT_"),
    )


def main(argv: list[str]) -> int:
    as_one = MERGED_FLAG in argv
    paths = [Path(a) for a in argv if a != MERGED_FLAG] or list(shipped().values())
    collector = built_collector()
    if collector is None:
        print(
            "the Collector is not built (bash collector-config/build/build.sh, which needs "
            "Go): only the checks no Collector makes are run",
            file=sys.stderr,
        )
    groups = [paths] if as_one else [[path] for path in paths]
    failed = 0
    for group in groups:
        problems = validate(collector, group) if collector else []
        for path in group:
            problems += check_file(path, known_names())
        label = " + ".join(str(path) for path in group)
        for problem in problems:
            print(f"{label}: {problem}")
        failed += bool(problems)
        if not problems:
            print(f"{label}: ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
