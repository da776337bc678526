"""Reading grafana/provisioning: datasource uids, correlations, escaping of "$"."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

PROVISIONING = Path(__file__).resolve().parent.parent / "provisioning"
DATASOURCES_FILE = PROVISIONING / "datasources" / "otel-dynamo.yaml"
_UNESCAPED = re.compile(r"(?<!\$)\$\{__[^}]*\}")


def datasources(path: Path = DATASOURCES_FILE) -> dict[str, dict[str, Any]]:
    """Provisioned datasources by uid."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {str(ds["uid"]): ds for ds in data.get("datasources") or []}


def uid_types(path: Path = DATASOURCES_FILE) -> dict[str, str]:
    """uid -> datasource type, for dashgen.audit.datasource_problems."""
    return {uid: str(ds["type"]) for uid, ds in datasources(path).items()}


def unescaped_template_variables(text: str) -> list[str]:
    """Grafana ``${__...}`` template variables written without the "$$" escape.

    Grafana expands environment variables in provisioning files, so a single "$" before
    ``{__value.raw}`` or ``{__trace.traceId}`` would be replaced by an empty string.
    """
    return _UNESCAPED.findall(text)


def links(path: Path = DATASOURCES_FILE) -> set[tuple[str, str, str]]:
    """(from uid, how, to uid) for every cross-datasource link the provisioning declares."""
    found = set()
    for uid, ds in datasources(path).items():
        data = ds.get("jsonData") or {}
        for field in data.get("derivedFields") or []:
            found.add(
                (
                    uid,
                    f"derivedField:{field.get('matcherType')}:{field.get('name')}",
                    str(field.get("datasourceUid")),
                )
            )
        for dest in data.get("exemplarTraceIdDestinations") or []:
            found.add((uid, f"exemplar:{dest.get('name')}", str(dest.get("datasourceUid"))))
        for key in ("tracesToLogsV2", "tracesToMetrics", "lokiSearch"):
            if isinstance(data.get(key), dict):
                found.add((uid, key, str(data[key].get("datasourceUid"))))
    return found
