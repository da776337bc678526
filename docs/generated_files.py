"""What the docs generators share: writing their files, or, with ``--check``, failing
(exit 1, naming each stale file) where a committed file differs from what they make.

    python docs/generate_configuration.py [--check]
    python docs/generate_names.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_or_check(
    files: Mapping[Path, str], *, description: str, argv: list[str] | None = None
) -> int:
    """Writes each of ``files`` (path to wanted text), or checks them with ``--check``;
    the generator's command, to run when one is stale, is the running script."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="fail if a file differs")
    args = parser.parse_args(argv)
    if not args.check:
        for path, text in files.items():
            path.write_text(text, encoding="utf-8")
        return 0
    command = f"python {Path(sys.argv[0]).resolve().relative_to(ROOT)}"
    stale = [path for path, text in files.items() if path.read_text(encoding="utf-8") != text]
    for path in stale:
        print(f"{path.relative_to(ROOT)} is stale: run {command}", file=sys.stderr)
    return 1 if stale else 0
