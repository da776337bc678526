"""Every relative link in README.md and docs/*.md points at a file of the repository
and, where it names an anchor, at a heading of that Markdown file."""

from __future__ import annotations

import functools
import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


@functools.cache
def anchors(path: Path) -> frozenset[str]:
    """GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped,
    spaces as '-'."""
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    found = set()
    for heading in re.findall(r"^#+\s+(.*)$", text, re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return frozenset(found)


def broken_links(doc: Path) -> list[str]:
    text = _FENCE.sub("", doc.read_text(encoding="utf-8"))
    broken = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        file_part, _, anchor = target.partition("#")
        path = (doc.parent / file_part).resolve() if file_part else doc
        if not path.exists() or (anchor and path.suffix == ".md" and anchor not in anchors(path)):
            broken.append(target)
    return broken


def test_every_relative_link_in_the_docs_resolves() -> None:
    """No relative link in README.md, CONTRIBUTING.md or docs/*.md names a missing file or
    a missing heading anchor."""
    assert {doc.name: broken_links(doc) for doc in DOCS if broken_links(doc)} == {}
