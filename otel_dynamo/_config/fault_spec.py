"""The fault-injection spec (``OTEL_DYNAMO_FAULT``), parsed strictly.

Syntax: faults separated by ``;``, each ``KIND[@TARGET][:OPTION=VALUE,...]``::

    compile@relu;runtime@torch.sigmoid:compile_id=0/0,p=0.5,seed=3

A bad spec raises :class:`FaultSpecError` whose message names the part that is wrong.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

KIND_COMPILE = "compile"
KIND_RUNTIME = "runtime"
KIND_ACCURACY = "accuracy"
KIND_NON_LEAF_COMPILE = "non_leaf_compile"
KINDS = (KIND_COMPILE, KIND_RUNTIME, KIND_ACCURACY, KIND_NON_LEAF_COMPILE)

DEFAULT_TARGET = "relu"
"""As torch's own fault backends."""
ANY_OP = "*"
"""Any call in the graph; the default target of non_leaf_compile (as torch's backend)."""
DEFAULT_PROBABILITY = 1.0
DEFAULT_SEED = 0
OPTIONS = ("compile_id", "graph", "p", "seed")
ACCEPTED = (
    "faults separated by ';', each KIND[@TARGET][:OPTION=VALUE,...] with KIND one of "
    + ", ".join(KINDS)
    + "; TARGET an op (relu, torch.sigmoid, aten.relu.default; * = any op); OPTION one of "
    + "compile_id=F/A, graph=N, p=0..1, seed=N"
)

_TARGET = re.compile(r"^(\*|[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*)$")
_COMPILE_ID = re.compile(r"^\d+/\d+(_\d+)?$")


class FaultSpecError(ValueError):
    """A bad fault spec; the message names the wrong part."""


@dataclasses.dataclass(frozen=True)
class FaultSpec:
    """One fault: what fails, on which op, where, and how often."""

    kind: str
    target: str = DEFAULT_TARGET
    compile_id: str | None = None
    graph: int | None = None
    p: float = DEFAULT_PROBABILITY
    seed: int = DEFAULT_SEED

    def text(self) -> str:
        """The spec back as text (options at their defaults left out)."""
        options = [
            f"{name}={value}"
            for name, value, default in (
                ("compile_id", self.compile_id, None),
                ("graph", self.graph, None),
                ("p", self.p, DEFAULT_PROBABILITY),
                ("seed", self.seed, DEFAULT_SEED),
            )
            if value != default
        ]
        return f"{self.kind}@{self.target}" + (":" + ",".join(options) if options else "")

    def unrestricted(self) -> FaultSpec:
        """The same fault firing on every graph (what a repro script of it needs)."""
        return FaultSpec(self.kind, self.target)

    def applies_to(self, compile_id: str, graph: int) -> bool:
        """Deterministic: the same spec, compile id and graph index always decide alike."""
        if self.compile_id is not None and self.compile_id != compile_id:
            return False
        if self.graph is not None and self.graph != graph:
            return False
        if self.p >= 1.0:
            return True
        import hashlib  # only when a fault has a probability: kept off the start-up path

        key = f"{self.seed}|{self.text()}|{compile_id}|{graph}".encode()
        draw = int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / 2**64
        return draw < self.p


def parse_faults(raw: str) -> tuple[FaultSpec, ...]:
    """Parse OTEL_DYNAMO_FAULT; an empty value means no faults."""
    parts = [part.strip() for part in raw.split(";")]
    if parts == [""]:
        return ()
    return tuple(_parse_one(part) for part in parts)


def _parse_one(part: str) -> FaultSpec:
    if not part:
        raise FaultSpecError("empty fault between ';'")
    head, _, options = part.partition(":")
    kind, has_target, target = head.strip().partition("@")
    kind, target = kind.strip(), target.strip()
    if kind not in KINDS:
        raise FaultSpecError(f"unknown fault kind {kind!r} in {part!r}")
    if has_target and not _TARGET.match(target):
        raise FaultSpecError(f"bad target {target!r} in {part!r}")
    target = target or (ANY_OP if kind == KIND_NON_LEAF_COMPILE else DEFAULT_TARGET)
    if kind == KIND_ACCURACY and target == ANY_OP:
        raise FaultSpecError(f"an accuracy fault needs a named op, not '*', in {part!r}")
    return FaultSpec(kind, target, **_parse_options(options, part))


def _parse_options(text: str, part: str) -> dict[str, Any]:
    """FaultSpec's keyword arguments; each value of the type its option takes."""
    values: dict[str, Any] = {}
    for item in (item.strip() for item in text.split(",")) if text.strip() else ():
        name, has_value, value = (s.strip() for s in item.partition("="))
        if name not in OPTIONS or not has_value:
            raise FaultSpecError(f"unknown option {item!r} in {part!r}")
        if name in values:
            raise FaultSpecError(f"option {name!r} given twice in {part!r}")
        values[name] = _option_value(name, value, part)
    return values


def _option_value(name: str, value: str, part: str) -> object:
    bad = FaultSpecError(f"bad value {name}={value!r} in {part!r}")
    if name == "compile_id":
        if not _COMPILE_ID.match(value):
            raise bad
        return value
    try:
        number = float(value) if name == "p" else int(value)
    except ValueError:
        raise bad from None
    if (name == "p" and not 0.0 <= number <= 1.0) or (name != "p" and number < 0):
        raise bad
    return number
