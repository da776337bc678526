"""Grafana provisioning: schema-valid, correlated, and matching the dashboards' uids."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import _stack_support as support
import jsonschema
import pytest
from dashgen import provisioning, queries, structure
from dashgen.datasources import UIDS

SCHEMAS = support.GRAFANA / "schema"
YAMLLINT_CONFIG = support.COLLECTOR / "yamllint.yaml"


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text("utf-8"))


def _errors(instance: object, schema_name: str) -> list[str]:
    validator = jsonschema.Draft202012Validator(_schema(schema_name))
    return [error.message for error in validator.iter_errors(instance)]


def test_datasources_file_matches_its_schema() -> None:
    """grafana/provisioning/datasources/otel-dynamo.yaml satisfies datasources.schema.json."""
    assert _errors(support.load_yaml(support.DATASOURCES_FILE), "datasources.schema.json") == []


def test_datasource_schema_rejects_missing_uid_and_unknown_type() -> None:
    """A datasource without uid, of a type the stack does not ship, is rejected."""
    broken = {
        "apiVersion": 1,
        "datasources": [{"name": "x", "type": "graphite", "access": "proxy", "url": "http://x"}],
    }
    errors = _errors(broken, "datasources.schema.json")
    assert "'uid' is a required property" in errors
    assert any("'graphite' is not one of" in e for e in errors)


def test_dashboard_provider_file_matches_its_schema() -> None:
    """grafana/provisioning/dashboards/otel-dynamo.yaml satisfies its schema."""
    provider = support.load_yaml(support.DASHBOARD_PROVIDER_FILE)
    assert _errors(provider, "dashboard-providers.schema.json") == []


def test_provider_schema_rejects_relative_path() -> None:
    """A dashboard provider with a relative options.path is rejected."""
    broken = {
        "apiVersion": 1,
        "providers": [{"name": "x", "type": "file", "options": {"path": "dashboards"}}],
    }
    assert any("does not match" in e for e in _errors(broken, "dashboard-providers.schema.json"))


def test_provisioned_uids_are_the_ones_dashboards_use() -> None:
    """The provisioned datasources are exactly the four uids of dashgen.datasources."""
    assert provisioning.uid_types() == {uid: kind for kind, uid in UIDS.items()}


def test_every_dashboard_datasource_is_provisioned() -> None:
    """Every datasource uid (and type) a dashboard references is provisioned."""
    assert structure.datasource_problems(support.dashboards(), provisioning.uid_types()) == []


def _with_variables(panels: list[dict[str, object]], **defaults: str) -> dict[str, object]:
    """A dashboard model of ``panels`` whose datasource variables default to ``defaults``."""
    variables = [
        {"type": "datasource", "name": name, "query": "x", "current": {"value": uid}}
        for name, uid in defaults.items()
    ]
    return {"panels": panels, "templating": {"list": variables}}


def test_unprovisioned_or_mistyped_uid_is_reported() -> None:
    """A datasource variable defaulting to an unknown uid, or to a uid of another type, is
    reported, and so is a panel naming a fixed uid instead of a variable."""
    model = _with_variables(
        [
            {"title": "a", "datasource": {"type": "prometheus", "uid": "${ds_a}"}},
            {"title": "b", "datasource": {"type": "loki", "uid": "${ds_b}"}},
            {"title": "c", "datasource": {"type": "loki", "uid": UIDS["loki"]}},
        ],
        ds_a="nope",
        ds_b=UIDS["tempo"],
    )
    problems = structure.datasource_problems({"d.json": model}, provisioning.uid_types())
    assert problems == [
        "d.json: panel 'a': datasource uid 'nope' is not provisioned",
        f"d.json: panel 'b': datasource '{UIDS['tempo']}' is a tempo, not a loki",
        f"d.json: panel 'c': datasource uid '{UIDS['loki']}' is fixed, not a variable",
    ]


def test_dashboards_imported_into_another_grafana_use_its_datasources() -> None:
    """Imported where the datasources have other uids (each datasource variable set to
    that Grafana's, as Grafana does on import), every panel, query and variable of every
    dashboard resolves to those uids, and no shipped uid is left anywhere in it."""
    theirs = {kind: f"their-{kind}-uid" for kind in UIDS}
    for file, model in support.dashboards().items():
        imported = json.loads(json.dumps(model))
        for variable in imported["templating"]["list"]:
            if variable["type"] == "datasource":
                uid = theirs[variable["query"]]
                variable["current"] = {"selected": True, "text": uid, "value": uid}
        defaults = structure.datasource_defaults(imported)
        resolved = {
            (kind, defaults[uid[2:-1]]) for _where, kind, uid in queries.datasource_refs(imported)
        }
        assert resolved and resolved <= {(kind, uid) for kind, uid in theirs.items()}, file
        assert not any(uid in json.dumps(imported) for uid in UIDS.values()), file


def test_logs_traces_and_metrics_are_correlated() -> None:
    """Log lines link to Tempo by trace_id, traces link to logs, exemplars link to Tempo."""
    assert {
        (UIDS["loki"], "derivedField:label:trace_id", UIDS["tempo"]),
        (UIDS["tempo"], "tracesToLogsV2", UIDS["loki"]),
        (UIDS["jaeger"], "tracesToLogsV2", UIDS["loki"]),
        (UIDS["tempo"], "tracesToMetrics", UIDS["prometheus"]),
        (UIDS["prometheus"], "exemplar:trace_id", UIDS["tempo"]),
    } <= provisioning.links()


def test_grafana_template_variables_are_escaped() -> None:
    """Every ${__...} in the provisioning file is written $${__...} (Grafana expands $)."""
    assert (
        provisioning.unescaped_template_variables(support.DATASOURCES_FILE.read_text("utf-8")) == []
    )


def test_unescaped_template_variable_is_found() -> None:
    """A single-$ ${__value.raw} is reported; the escaped form is not."""
    text = 'url: "${__value.raw}"\nquery: "$${__trace.traceId}"'
    assert provisioning.unescaped_template_variables(text) == ["${__value.raw}"]


def test_trace_to_logs_query_uses_loki_otlp_fields() -> None:
    """Traces open their logs by the trace_id structured metadata Loki's OTLP ingest makes."""
    tempo = provisioning.datasources()[UIDS["tempo"]]["jsonData"]["tracesToLogsV2"]
    assert tempo["customQuery"] is True
    assert '| trace_id="$${__trace.traceId}"' in tempo["query"]


def test_provider_path_is_where_compose_mounts_the_dashboards() -> None:
    """The dashboard provider reads the directory the compose file mounts grafana/dashboards on."""
    path = support.load_yaml(support.DASHBOARD_PROVIDER_FILE)["providers"][0]["options"]["path"]
    volumes = support.load_yaml(support.COMPOSE_FILE)["services"]["grafana"]["volumes"]
    assert f"../grafana/dashboards:{path}:ro" in volumes


@pytest.fixture
def yamllint() -> str:
    binary = shutil.which("yamllint")
    if binary is None:
        pytest.skip("yamllint is not installed (pip install yamllint)")
    return binary


def test_stack_yaml_passes_yamllint(yamllint: str) -> None:
    """All YAML of collector-config/ and grafana/provisioning/ passes yamllint."""
    result = subprocess.run(
        [
            yamllint,
            "-s",
            "-c",
            str(YAMLLINT_CONFIG),
            str(support.COLLECTOR),
            str(support.GRAFANA / "provisioning"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stdout) == (0, "")


def test_yamllint_rejects_duplicate_keys(yamllint: str, tmp_path: Path) -> None:
    """yamllint with the stack's settings rejects a YAML file with a duplicate key."""
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: 1\napiVersion: 2\n", "utf-8")
    result = subprocess.run(
        [yamllint, "-s", "-c", str(YAMLLINT_CONFIG), str(broken)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1 and "duplication of key" in result.stdout
