"""All dashboards, keyed by the file name they are committed under."""

from __future__ import annotations

from pathlib import Path

from dashgen import drilldown, layout, overview, per_job

DASHBOARD_DIR = Path(__file__).resolve().parent.parent / "dashboards"
BUILDERS = {
    "otel-dynamo-overview.json": overview.dashboard,
    "otel-dynamo-job.json": per_job.dashboard,
    "otel-dynamo-compile.json": drilldown.dashboard,
}


def render() -> dict[str, str]:
    """File name -> canonical JSON text of every dashboard."""
    return {file: layout.dumps(builder()) for file, builder in BUILDERS.items()}


def stale(directory: Path = DASHBOARD_DIR) -> list[str]:
    """Files in ``directory`` that are missing or differ from what the generator produces."""
    expected = render()
    out = [
        f
        for f, text in expected.items()
        if not (directory / f).is_file() or (directory / f).read_text("utf-8") != text
    ]
    extra = {p.name for p in directory.glob("*.json")} - expected.keys()
    return sorted(out + list(extra))


def write(directory: Path = DASHBOARD_DIR) -> list[Path]:
    """Write every dashboard into ``directory``; return the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for file, text in render().items():
        path = directory / file
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths
