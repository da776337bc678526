"""Small wrappers over grafana-foundation-sdk builders: one call per panel kind.

Every target gets an explicit ref_id and datasource; every panel an explicit id (set
by dashgen.layout) so links into panels stay stable between generations.
"""

from __future__ import annotations

from typing import Any

from grafana_foundation_sdk.builders import (
    bargauge,
    common,
    logs,
    loki,
    prometheus,
    stat,
    table,
    tempo,
    timeseries,
)
from grafana_foundation_sdk.models import common as common_models
from grafana_foundation_sdk.models import dashboard as dashboard_models
from grafana_foundation_sdk.models import prometheus as prometheus_models
from grafana_foundation_sdk.models import tempo as tempo_models

from dashgen.datasources import ref

REF_IDS = "ABCDEFGHIJ"
Target = prometheus.Dataquery | loki.Dataquery | tempo.TempoQuery


def prom(
    expr: str, legend: str = "", instant: bool = False, exemplar: bool = False
) -> prometheus.Dataquery:
    """A Prometheus target (ref_id is assigned by the panel helper)."""
    query = prometheus.Dataquery().expr(expr).datasource(ref("prometheus"))
    query = query.legend_format(legend or "__auto")
    query = query.instant() if instant else query.range()
    return query.exemplar(exemplar)


def logql(expr: str, legend: str = "", instant: bool = False) -> loki.Dataquery:
    """A Loki target: a log query, or a metric query when ``instant``/``legend`` is given."""
    query = loki.Dataquery().expr(expr).datasource(ref("loki"))
    if legend:
        query = query.legend_format(legend)
    return query.instant(True).range(False) if instant else query


def traceql(query: str, limit: int = 20) -> tempo.TempoQuery:
    """A Tempo TraceQL search shown as a table of spans (each links to its trace)."""
    return (
        tempo.TempoQuery()
        .query(query)
        .query_type("traceql")
        .limit(limit)
        .table_type(tempo_models.SearchTableType.SPANS)
        .datasource(ref("tempo"))
    )


def _with_targets(panel: Any, kind: str, targets: list[Target]) -> Any:
    panel = panel.datasource(ref(kind))
    for letter, target in zip(REF_IDS, targets, strict=False):
        panel = panel.with_target(target.ref_id(letter))
    return panel


def graph(
    title: str, description: str, unit: str, targets: list[Target], kind: str = "prometheus"
) -> timeseries.Panel:
    """A time series panel."""
    panel = timeseries.Panel().title(title).description(description).unit(unit)
    return _with_targets(panel, kind, targets).height(8).span(12)


def bars(
    title: str, description: str, unit: str, targets: list[Target], kind: str = "prometheus"
) -> bargauge.Panel:
    """A horizontal bar gauge of instant values, one bar per series (top-N lists)."""
    panel = (
        bargauge.Panel()
        .title(title)
        .description(description)
        .unit(unit)
        .orientation(common_models.VizOrientation.HORIZONTAL)
        .display_mode(common_models.BarGaugeDisplayMode.BASIC)
        .reduce_options(common.ReduceDataOptions().values(False).calcs(["lastNotNull"]))
    )
    return _with_targets(panel, kind, targets).height(8).span(12)


def single(title: str, description: str, unit: str, target: Target) -> stat.Panel:
    """A stat panel showing one number."""
    panel = (
        stat.Panel()
        .title(title)
        .description(description)
        .unit(unit)
        .reduce_options(common.ReduceDataOptions().values(False).calcs(["lastNotNull"]))
    )
    return _with_targets(panel, "prometheus", [target]).height(4).span(6)


def label_table(
    title: str, description: str, unit: str, columns: dict[str, str], targets: list[Target]
) -> table.Panel:
    """A table of instant Prometheus queries joined on their labels, one row per series.

    ``columns`` maps a label or a query's value column ("Value #A") to its header; every
    other column (Time, the remaining labels) is hidden.
    """
    rows = [target.format(prometheus_models.PromQueryFormat.TABLE) for target in targets]
    panel = (
        table.Panel()
        .title(title)
        .description(description)
        .unit(unit)
        .with_transformation(dashboard_models.DataTransformerConfig(id_val="merge", options={}))
        .with_transformation(
            dashboard_models.DataTransformerConfig(
                id_val="organize",
                options={
                    "includeByName": {name: True for name in columns},
                    "indexByName": {name: i for i, name in enumerate(columns)},
                    "renameByName": columns,
                },
            )
        )
    )
    return _with_targets(panel, "prometheus", rows).height(8).span(24)


def spans(title: str, description: str, query: str, limit: int = 20) -> table.Panel:
    """A table of spans found by a TraceQL query, slowest first."""
    panel = (
        table.Panel()
        .title(title)
        .description(description)
        .sort_by([common.TableSortByFieldState().display_name("Duration").desc(True)])
    )
    return _with_targets(panel, "tempo", [traceql(query, limit)]).height(10).span(24)


def log_lines(title: str, description: str, expr: str) -> logs.Panel:
    """A logs panel (each line carries trace_id, linked to Tempo by the Loki datasource)."""
    panel = (
        logs.Panel()
        .title(title)
        .description(description)
        .show_time(True)
        .wrap_log_message(True)
        .enable_log_details(True)
        .sort_order(common_models.LogsSortOrder.DESCENDING)
    )
    return _with_targets(panel, "loki", [logql(expr)]).height(10).span(24)
