"""``otel-dynamo diff --fail-on``: conditions on a diff that fail a CI step.

A condition is ``METRIC OP VALUE``:

* ``METRIC``: a total of the summary (every key of ``TOTAL_KEYS``: ``frame_compiles``,
  ``recompiles``, ``compile_seconds``, ...), or a count of what appeared or went
  (``ITEM_COUNTS``: ``new_graph_breaks``, ...; ``variants_became_hot``: variants cold or
  absent in the base, hot in the new run);
* ``OP``: ``>``, ``>=``, ``<``, ``<=``, ``==``, ``!=``;
* ``VALUE``: ``N`` compares the new run's value, ``+N`` / ``-N`` the change from the base,
  ``+N%`` / ``N%`` the change relative to the base, in percent.

``new_graph_breaks>0``, ``recompiles>+2``, ``compile_seconds>+20%``.
"""

from __future__ import annotations

import dataclasses
import operator
import re
from collections.abc import Callable, Sequence

from otel_dynamo.report.diff.compare import occurrences
from otel_dynamo.report.diff.schema import Counted, Diff, Verdict
from otel_dynamo.report.summary import COUNT_TOTALS, TIME_TOTALS

ITEM_COUNTS = ("new_graph_breaks", "gone_graph_breaks", "new_recompiles", "new_failures")
"""Counts of what appeared in or went from a keyed section of the diff."""
VARIANT_COUNTS = ("variants_became_hot",)
"""Counts of variants (function, file, failed guard) that became hot."""
PERCENT_DECIMALS = 2
"""A relative change is compared (and shown) in percent to this many decimals."""
METRICS = (*COUNT_TOTALS, *TIME_TOTALS, *ITEM_COUNTS, *VARIANT_COUNTS)
_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}
_CONDITION = re.compile(
    r"^\s*(?P<metric>[a-z_]+)\s*(?P<op>>=|<=|==|!=|>|<)\s*"
    r"(?P<sign>[+-]?)(?P<number>\d+(?:\.\d+)?)(?P<percent>%?)\s*$"
)
ACCEPTED = (
    "METRIC OP VALUE, e.g. new_graph_breaks>0, recompiles>+2, compile_seconds>+20%; "
    f"METRIC one of {', '.join(METRICS)}; OP one of > >= < <= == !=; "
    "VALUE N (the new value), +N/-N (the change), +N% (the relative change)"
)


@dataclasses.dataclass(frozen=True)
class Condition:
    """One parsed ``--fail-on`` condition."""

    text: str
    metric: str
    op: str
    threshold: float
    compares: str
    """``value`` (the new run's), ``change`` (new - base) or ``percent`` (change / base)."""

    @classmethod
    def parse(cls, raw: str) -> Condition:
        match = _CONDITION.match(raw)
        if match is None or match["metric"] not in METRICS:
            raise ValueError(f"{raw!r}: expected {ACCEPTED}")
        number = float(match["number"]) * (-1 if match["sign"] == "-" else 1)
        compares = "percent" if match["percent"] else ("change" if match["sign"] else "value")
        return cls(raw.strip(), match["metric"], match["op"], number, compares)

    def evaluate(self, diff: Diff) -> Verdict:
        """The condition, the value it compared and whether it fails the gate."""
        value = self._value(diff)
        failed = value is not None and _OPERATORS[self.op](value, self.threshold)
        return {"condition": self.text, "compared": self.compares, "value": value, "failed": failed}

    def _value(self, diff: Diff) -> float | None:
        if self.metric == "variants_became_hot":
            return float(len(diff["variants"]["became_hot"]))
        items = _items(diff).get(self.metric)
        if items is not None:
            return float(occurrences(items))
        total = diff["totals"][self.metric]
        if self.compares == "value":
            return float(total["new"])
        if self.compares == "change":
            return float(total["change"])
        relative = total["relative"]
        if relative is None:  # from zero: no change is 0 %, any other unbounded
            return 0.0 if total["change"] == 0 else float("inf")
        return round(float(relative) * 100, PERCENT_DECIMALS)


def _items(diff: Diff) -> dict[str, Sequence[Counted]]:
    """The part of the diff each of ITEM_COUNTS counts."""
    return {
        "new_graph_breaks": diff["graph_breaks"]["new"],
        "gone_graph_breaks": diff["graph_breaks"]["gone"],
        "new_recompiles": diff["recompiles"]["new"],
        "new_failures": diff["failures"]["new"],
    }
