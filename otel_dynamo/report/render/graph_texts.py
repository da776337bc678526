"""The graph texts a run captured (``graphs`` in ``OTEL_DYNAMO_CAPTURE``): Dynamo's graph,
AOT Autograd's graphs, inductor's output code and guard trees, one log record each.

``GraphTextCollector`` keeps them per process for the HTML page; ``GraphTextFiles``
writes them out as each group of processes is read (``otel-dynamo report --artifacts
DIR``), one file each, named by process, compile id, order, kind, the compiled graph it
belongs to (forward, backward, inference) and whether Dynamo threw it away (a text of an
analysis attempt before its compile's last: ``discarded``).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from otel_dynamo import names
from otel_dynamo.report.read.model import Telemetry
from otel_dynamo.report.read.values import integer, text

UNKNOWN_COMPILE_ID = "unknown"
DISCARDED = "discarded"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_CODE_SUFFIX = ".py"
_TEXT_SUFFIX = ".txt"
_FILE_MODE = 0o600


@dataclasses.dataclass(frozen=True)
class GraphText:
    """One captured text, with the process and compile it belongs to."""

    process: str
    compile_id: str
    kind: str
    graph_index: int | None
    text: str
    length: int
    truncated: bool
    path: str | None
    run_kind: str | None = None
    """forward, backward or inference (AOT Autograd's graphs, inductor's output code)."""
    attempt: int | None = None
    """Dynamo's analysis attempt that made the text (None in files recorded without it)."""
    discarded: bool = False
    """Made by an attempt before its compile's last: work Dynamo threw away."""

    @property
    def run_kind_label(self) -> str | None:
        """The run kind where the kind does not already say it ("aot_forward_graph" does;
        "inductor_output_code" does not)."""
        if self.run_kind is None or self.run_kind in self.kind:
            return None
        return self.run_kind

    @property
    def title(self) -> str:
        """ "inductor_output_code · backward · graph 0 · 1,426 chars · discarded" """
        parts = [self.kind]
        if self.run_kind_label is not None:
            parts.append(self.run_kind_label)
        if self.graph_index is not None:
            parts.append(f"graph {self.graph_index}")
        size = f"{self.length:,} chars"
        parts.append(f"{size}, cut to {len(self.text):,}" if self.truncated else size)
        if self.discarded:
            parts.append("discarded")
        return " · ".join(parts)

    def as_data(self) -> dict[str, object]:
        return {"kind": self.kind, "title": self.title, "text": self.text, "path": self.path}


def graph_texts(telemetry: Telemetry) -> list[GraphText]:
    """Every captured text of ``telemetry``, in file order, ``discarded`` set on those of
    an attempt before the last attempt its compile's texts show (``telemetry`` holds the
    whole of each of its processes)."""
    items = list(_recorded_texts(telemetry))
    last: dict[tuple[str, str], int] = {}
    for item in items:
        if item.attempt is not None:
            key = (item.process, item.compile_id)
            last[key] = max(last.get(key, item.attempt), item.attempt)
    return [
        dataclasses.replace(item, discarded=True)
        if item.attempt is not None and item.attempt < last[(item.process, item.compile_id)]
        else item
        for item in items
    ]


def _recorded_texts(telemetry: Telemetry) -> Iterator[GraphText]:
    for record in telemetry.logs:
        if record.event_name != names.LOG_GRAPH_TEXT:
            continue
        attributes = record.attributes
        body = text(attributes.get(names.ATTR_GRAPH_TEXT))
        kind = text(attributes.get(names.ATTR_GRAPH_TEXT_KIND))
        if body is None or kind is None:
            continue
        yield GraphText(
            process=record.process.label,
            compile_id=text(attributes.get(names.ATTR_COMPILE_ID)) or UNKNOWN_COMPILE_ID,
            kind=kind,
            graph_index=integer(attributes.get(names.ATTR_GRAPH_INDEX)),
            text=body,
            length=integer(attributes.get(names.ATTR_GRAPH_TEXT_LENGTH)) or len(body),
            truncated=attributes.get(names.ATTR_GRAPH_TEXT_TRUNCATED) is True,
            path=text(attributes.get(names.ATTR_GRAPH_TEXT_PATH)),
            run_kind=text(attributes.get(names.ATTR_RUN_KIND)),
            attempt=integer(attributes.get(names.ATTR_COMPILE_ATTEMPT)),
        )


def texts_of(telemetry: Telemetry) -> list[GraphText]:
    """Every graph text of ``telemetry``, as a list (what a reading worker hands back)."""
    return list(graph_texts(telemetry))


class GraphTextCollector:
    """Collects the texts per process label and compile id (for the HTML page)."""

    def __init__(self) -> None:
        self.by_process: dict[str, dict[str, list[GraphText]]] = {}

    @staticmethod
    def part(telemetry: Telemetry) -> list[GraphText]:
        """The texts of a group (``merge`` collects them)."""
        return texts_of(telemetry)

    def add(self, telemetry: Telemetry) -> None:
        self.merge(texts_of(telemetry))

    def merge(self, part: list[GraphText]) -> None:
        for item in part:
            compiles = self.by_process.setdefault(item.process, {})
            compiles.setdefault(item.compile_id, []).append(item)

    def restart(self) -> None:
        self.by_process.clear()

    def page_data(self, process: str) -> list[dict[str, object]]:
        """The texts of one process as the page shows them: per compile, in order."""
        compiles = self.by_process.get(process, {})
        return [
            {"compile_id": compile_id, "texts": [item.as_data() for item in items]}
            for compile_id, items in compiles.items()
        ]


class GraphTextFiles:
    """Writes each text to ``DIR/<process>/<compile id>/<NN>-<kind>[-<run
    kind>][-graph<i>][-discarded].py|.txt`` (owner-only files; ``/`` in a compile id
    becomes ``-``; ``NN`` numbers the texts of a compile, so names never repeat)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.written = 0
        self._counts: defaultdict[tuple[str, str], int] = defaultdict(int)

    @staticmethod
    def part(telemetry: Telemetry) -> list[GraphText]:
        """The texts of a group (``merge`` writes them)."""
        return texts_of(telemetry)

    def add(self, telemetry: Telemetry) -> None:
        self.merge(texts_of(telemetry))

    def merge(self, part: list[GraphText]) -> None:
        for item in part:
            self.write(item)

    def restart(self) -> None:
        """Read again from the start: the same names come again and are overwritten."""
        self._counts.clear()
        self.written = 0

    def write(self, item: GraphText) -> None:
        """One text as its own file (the next number of its process and compile id)."""
        folder = self.directory / safe_name(item.process) / safe_name(item.compile_id)
        folder.mkdir(parents=True, exist_ok=True)
        order = self._counts[(item.process, item.compile_id)]
        self._counts[(item.process, item.compile_id)] += 1
        path = folder / file_name(order, item)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        with os.fdopen(os.open(path, flags, _FILE_MODE), "w", encoding="utf-8") as stream:
            stream.write(item.text)
            if item.truncated:
                stream.write(cut_note(item))
        self.written += 1


def cut_note(item: GraphText) -> str:
    """The line that ends a file whose text was cut: a comment in both file kinds."""
    return (
        f"\n# … cut: {len(item.text):,} of {item.length:,} characters kept "
        "(OTEL_DYNAMO_MAX_GRAPH_TEXT_LENGTH)\n"
    )


def safe_name(part: str) -> str:
    """A path part from any text: "0/1" -> "0-1", "rank 3 · host" -> "rank_3_host"."""
    cleaned = _UNSAFE.sub("_", part.replace("/", "-")).strip("._") or "_"
    return cleaned[:100]


def file_name(order: int, item: GraphText) -> str:
    """ "05-inductor_output_code-backward-graph0.py", "00-dynamo_output_graph-graph0-
    discarded.py": the order, the kind, the run kind where the kind does not say it, the
    graph index, and whether Dynamo threw the text away."""
    parts = [f"{order:02d}", safe_name(item.kind)]
    if item.run_kind_label is not None:
        parts.append(safe_name(item.run_kind_label))
    if item.graph_index is not None:
        parts.append(f"graph{item.graph_index}")
    if item.discarded:
        parts.append(DISCARDED)
    suffix = _TEXT_SUFFIX if item.kind == names.GRAPH_TEXT_GUARDS else _CODE_SUFFIX
    return "-".join(parts) + suffix
