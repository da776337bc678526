"""Cross-references: every pipeline component is defined, allowed, fits its signal."""

from __future__ import annotations

from otelcol_check.allowlist import AllowList
from otelcol_check.model import SECTIONS, SIGNALS, Config, pipelines, section, signal_of, type_of


def allowlist_problems(config: Config, allow: AllowList) -> list[str]:
    """Deprecated or unknown component types (for the pinned Collector version)."""
    problems = []
    for name in SECTIONS:
        for component_id in section(config, name):
            kind = type_of(component_id)
            reason = allow.deprecated.get(name, {}).get(kind)
            if reason:
                problems.append(f"{name}.{component_id}: deprecated component '{kind}': {reason}")
            elif not allow.known(name, kind):
                problems.append(
                    f"{name}.{component_id}: '{kind}' is not in the allow-list of "
                    f"otelcol-contrib {allow.version}"
                )
    return problems


def _receiver_fits(config: Config, allow: AllowList, rid: str, signal: str) -> bool:
    if rid in section(config, "connectors"):
        routes = allow.connectors.get(type_of(rid), {})
        return any(signal in out for out in routes.values())
    return signal in allow.signals["receivers"].get(type_of(rid), frozenset())


def _exporter_fits(config: Config, allow: AllowList, eid: str, signal: str) -> bool:
    if eid in section(config, "connectors"):
        return signal in allow.connectors.get(type_of(eid), {})
    return signal in allow.signals["exporters"].get(type_of(eid), frozenset())


def _checkable(config: Config, allow: AllowList, role: str, cid: str) -> bool:
    """Signal fit is checked for allowed types and connectors (unknown types are reported
    by allowlist_problems already)."""
    return allow.known(role, type_of(cid)) or cid in section(config, "connectors")


def _pipeline_problems(
    config: Config, allow: AllowList, pid: str, pipeline: dict[str, list[str]]
) -> list[str]:
    signal = signal_of(pid)
    if signal not in SIGNALS:
        return [f"service.pipelines.{pid}: unknown signal '{signal}'"]
    problems = []
    roles = {"receivers": _receiver_fits, "exporters": _exporter_fits}
    for role, fits in roles.items():
        for cid in pipeline.get(role) or []:
            if cid not in section(config, role) and cid not in section(config, "connectors"):
                problems.append(f"service.pipelines.{pid}: {role[:-1]} '{cid}' is not defined")
            elif _checkable(config, allow, role, cid) and not fits(config, allow, cid, signal):
                problems.append(
                    f"service.pipelines.{pid}: {role[:-1]} '{cid}' does not support {signal}"
                )
    for cid in pipeline.get("processors") or []:
        if cid not in section(config, "processors"):
            problems.append(f"service.pipelines.{pid}: processor '{cid}' is not defined")
        elif signal not in allow.signals["processors"].get(type_of(cid), {signal}):
            problems.append(f"service.pipelines.{pid}: processor '{cid}' does not support {signal}")
    return problems


def _order_problems(pid: str, processors: list[str]) -> list[str]:
    limiters = [i for i, p in enumerate(processors) if type_of(p) == "memory_limiter"]
    if limiters and limiters[0] != 0:
        return [f"service.pipelines.{pid}: memory_limiter must be the first processor"]
    return []


def _usage_problems(config: Config) -> list[str]:
    used: dict[str, set[str]] = {name: set() for name in SECTIONS}
    for _, pipeline in pipelines(config):
        for role in ("receivers", "processors", "exporters"):
            for cid in pipeline.get(role) or []:
                target = "connectors" if cid in section(config, "connectors") else role
                used[target].add(f"{role}:{cid}" if target == "connectors" else cid)
    service = config.get("service") if isinstance(config.get("service"), dict) else {}
    used["extensions"] = set(service.get("extensions") or [])
    problems = [
        f"service.extensions: extension '{e}' is not defined"
        for e in sorted(used["extensions"] - set(section(config, "extensions")))
    ]
    for name in ("receivers", "processors", "exporters", "extensions"):
        problems += [
            f"{name}.{cid}: defined but used by no pipeline"
            for cid in section(config, name)
            if cid not in used[name]
        ]
    for cid in section(config, "connectors"):
        if (
            f"receivers:{cid}" not in used["connectors"]
            or f"exporters:{cid}" not in used["connectors"]
        ):
            problems.append(
                f"connectors.{cid}: a connector must be an exporter of one pipeline "
                "and a receiver of another"
            )
    return problems


def reference_problems(config: Config, allow: AllowList) -> list[str]:
    """All cross-reference problems of one config."""
    problems = allowlist_problems(config, allow)
    for pid, pipeline in pipelines(config):
        problems += _pipeline_problems(config, allow, pid, pipeline)
        problems += _order_problems(pid, list(pipeline.get("processors") or []))
    return problems + _usage_problems(config)
