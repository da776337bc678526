#!/usr/bin/env python3
"""Generate grafana/dashboards/*.json from grafana/dashgen (grafana-foundation-sdk).

python grafana/generate.py           # rewrite the committed dashboards
python grafana/generate.py --check   # exit 1 if a committed dashboard is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dashgen import build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    if args.check:
        stale = build.stale()
        for name in stale:
            print(f"stale: grafana/dashboards/{name} (run python grafana/generate.py)")
        return 1 if stale else 0
    for path in build.write():
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
