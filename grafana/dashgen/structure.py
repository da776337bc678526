"""Structural checks of dashboard JSON the SDK does not make: datasources, Loki selectors."""

from __future__ import annotations

import re

from dashgen.queries import datasource_refs, queries, render


def datasource_problems(
    models: dict[str, dict[str, object]], provisioned: dict[str, str]
) -> list[str]:
    """Datasource references (uid, type) of the dashboards that no provisioned one has,
    each reference resolved through the dashboard's datasource variables (their defaults);
    a reference naming a fixed uid instead of a variable is a problem too (the dashboard
    would have no data in any other Grafana).

    ``provisioned`` maps uid -> type, as read from grafana/provisioning/datasources.
    """
    problems = []
    for file, model in models.items():
        defaults = datasource_defaults(model)
        for where, kind, named in datasource_refs(model):
            variable = _VARIABLE_REF.fullmatch(named)
            if variable is None:
                problems.append(
                    f"{file}: {where}: datasource uid '{named}' is fixed, not a variable"
                )
                continue
            uid = defaults.get(variable.group(1), named)
            if uid not in provisioned:
                problems.append(f"{file}: {where}: datasource uid '{uid}' is not provisioned")
            elif provisioned[uid] != kind:
                problems.append(
                    f"{file}: {where}: datasource '{uid}' is a {provisioned[uid]}, not a {kind}"
                )
    return problems


_VARIABLE_REF = re.compile(r"\$\{(\w+)\}")


def datasource_defaults(model: dict[str, object]) -> dict[str, str]:
    """Each datasource variable of a dashboard and the uid it selects (its current value)."""
    variables = (model.get("templating") or {}).get("list") or []  # type: ignore[union-attr]
    return {
        str(v["name"]): str((v.get("current") or {}).get("value") or "")
        for v in variables
        if v.get("type") == "datasource"
    }


_SELECTOR = re.compile(r"\{([^{}]*)\}")
_MATCHER = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)"')


def _all_values(model: dict[str, object]) -> dict[str, str]:
    """Each variable's widest value: its "All" value, else its default text."""
    variables = (model.get("templating") or {}).get("list") or []  # type: ignore[union-attr]
    return {
        str(v["name"]): str(v.get("allValue") or v.get("query") or "")
        for v in variables
        if v.get("type") != "datasource"
    }


def _matches_nonempty(op: str, value: str) -> bool:
    if op == "=":
        return bool(value)
    return op == "=~" and re.fullmatch(value, "") is None


def stream_selector_problems(model: dict[str, object]) -> list[str]:
    """Loki stream selectors that, with every variable at "All", have no matcher that
    excludes the empty value (Loki rejects such queries)."""
    values = _all_values(model)
    problems = []
    for query in queries(model):
        if query.kind != "loki":
            continue
        for selector in _SELECTOR.findall(render(query.text, values)):
            matchers = _MATCHER.findall(selector)
            if not any(_matches_nonempty(op, value) for _, op, value in matchers):
                problems.append(f"{query.where}: stream selector {{{selector}}} matches everything")
    return problems
