"""Template variables shared by the dashboards."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.models.dashboard import VariableRefresh, VariableSort

from dashgen import promnames
from dashgen.datasources import ref
from dashgen.promql import lbl

ALL = ".*"
ALL_NON_EMPTY = ".+"  # Loki refuses a stream selector whose matchers all match "".


def _values(
    name: str, label: str, query: str, multi: bool, all_value: str = ALL
) -> db.QueryVariable:
    variable = (
        db.QueryVariable(name)
        .label(label)
        .datasource(ref("prometheus"))
        .query(query)
        .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED)
        .sort(VariableSort.ALPHABETICAL_ASC)
    )
    if multi:
        variable = variable.multi(True).include_all(True).all_value(all_value)
    return variable


def job(multi: bool = True) -> db.QueryVariable:
    """Jobs (Prometheus ``job`` = the service.name of the traced processes)."""
    series = promnames.series("METRIC_COMPILES")
    return _values("job", "Job", f"label_values({series}, job)", multi, ALL_NON_EMPTY)


def backend() -> db.QueryVariable:
    """Backends seen in the selected jobs."""
    series = promnames.series("METRIC_COMPILES")
    query = f'label_values({series}{{job=~"$job"}}, {lbl("ATTR_BACKEND")})'
    return _values("backend", "Backend", query, True)


def run_id() -> db.QueryVariable:
    """torchrun run ids of the selected job (empty when the job was not run by torchrun)."""
    series = promnames.series("METRIC_COMPILES")
    query = f'label_values({series}{{job="$job"}}, {lbl("RESOURCE_RUN_ID")})'
    return _values("run_id", "Run id", query, True)


def text(name: str, label: str, default: str) -> db.TextBoxVariable:
    """A free-text variable (regex or literal) with a default."""
    return db.TextBoxVariable(name).label(label).default_value(default)
