"""Standalone repro scripts for failing graphs, written with torch's own repro generator.

The script is ``torch._dynamo.repro.after_dynamo.generate_dynamo_fx_repro_string`` for
the graph as Dynamo captured it (inputs regenerated at random with the same shapes,
strides and dtypes). When otel_dynamo injected faults into that graph, the script
compiles with ``otel_dynamo.traced(<backend>, fault=<those faults, unrestricted>)``, so
it fails the same way in a fresh process; otherwise with the backend's registered name.

The environment torch's script sets first is replaced by otel_dynamo's (``environment``):
the same variables (names with TORCH, DYNAMO, INDUCTOR or TRITON), less every ``OTEL_*``
one, and a name that looks like a secret's written without its value.

Files are created owner-only (0600, in a 0700 directory when we create it), never
overwrite anything (``O_EXCL``; a taken name gets a numbered sibling), and are only ever
written directly inside the configured directory.

The aid, :class:`ReproScripts`, writes a script for each failure of one graph that the
settings ask for (its compile, its first failing run, a failed accuracy check).
"""

from __future__ import annotations

import copy
import itertools
import os
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opentelemetry.trace import Span
from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._config.fault_spec import (
    KIND_ACCURACY,
    KIND_COMPILE,
    KIND_NON_LEAF_COMPILE,
    KIND_RUNTIME,
    FaultSpec,
)
from otel_dynamo._config.settings import REPRO_CHOICES, Settings
from otel_dynamo._recording.boundary import guarded
from otel_dynamo._recording.run_state import RunState
from otel_dynamo._sources.aids import faults
from otel_dynamo._sources.aids.faults import FaultInjection
from otel_dynamo._sources.aids.graph import (
    INSTRUMENTATION_ERROR,
    AidedGraph,
    Compiling,
    GraphAid,
    earlier_aid,
)

if TYPE_CHECKING:
    from torch.fx import GraphModule


FILE_MODE = 0o600
DIR_MODE = 0o700
MAX_SIBLINGS = 1000
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
BACKEND_VARIABLE = "_OTEL_DYNAMO_BACKEND"

COPIED_NAME_PARTS = ("TORCH", "DYNAMO", "INDUCTOR", "TRITON")
"""A variable whose name holds one of these is set in the script (torch's own choice)."""
NOT_COPIED_PREFIX = "OTEL_"
"""Never copied: OTEL_DYNAMO_* and the SDK's variables configure telemetry, not the graph
(and OTEL_EXPORTER_OTLP_*HEADERS hold credentials)."""
MACHINE_PATHS = ("TRITON_LIBDEVICE_PATH", "TRITON_PTXAS_PATH", "TRITON_LIBCUDA_PATH")
"""Never copied (torch leaves them out too): paths of this machine's CUDA install."""
REPRO_VARIABLES = ("TORCHDYNAMO_REPRO_AFTER", "TORCHDYNAMO_REPRO_LEVEL")
"""Removed by the script: running it must not write repro scripts of its own."""
SECRET_NAME_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "AUTH", "CREDENTIAL")
"""A copied variable whose name holds one of these (any case) looks like a secret: its
line is written commented out, with a placeholder for the value."""
SECRET_PLACEHOLDER = "<not copied>"


def repro_text(
    gm: Any,
    args: Sequence[Any],
    *,
    backend: str,
    faults: Sequence[FaultSpec] = (),
    check_accuracy: bool = False,
) -> str:
    """The script text: torch's repro, compiled with the same injected faults if any."""
    import torch.fx
    from torch._dynamo.repro.after_dynamo import generate_dynamo_fx_repro_string

    module = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    text = _own_environment(
        generate_dynamo_fx_repro_string(module, list(args), backend, check_accuracy)
    )
    if not faults:
        return text
    spec = ";".join(fault.unrestricted().text() for fault in faults)
    call = f"backend={backend!r})"
    if call not in text:
        raise ValueError("torch's repro script has an unexpected form")
    prelude = (
        "import otel_dynamo\n"
        f"{BACKEND_VARIABLE} = otel_dynamo.traced({backend!r}, fault={spec!r})\n"
    )
    head, _, tail = text.rpartition("\nif __name__ == '__main__':")
    tail = tail.replace(call, f"backend={BACKEND_VARIABLE})")
    return f"{head}\n{prelude}\nif __name__ == '__main__':{tail}"


def environment(environ: Mapping[str, str]) -> str:
    """The lines that set the script's environment: each variable torch would copy
    (``COPIED_NAME_PARTS``) with its value, except ``OTEL_*`` ones and this machine's paths
    (left out) and those that look like secrets (``SECRET_NAME_PARTS``: commented out,
    the value a placeholder); then the repro variables removed."""
    lines = ["import os"]
    for name, value in environ.items():
        if not copied(name):
            continue
        if looks_secret(name):
            lines.append(
                f"# os.environ[{name!r}] = {SECRET_PLACEHOLDER!r}"
                "  # looks like a secret: its value is not copied; set it if the repro needs it"
            )
        else:
            lines.append(f"os.environ[{name!r}] = {value!r}")
    lines += [f"os.environ.pop({name!r}, None)" for name in REPRO_VARIABLES]
    return "\n".join(lines) + "\n"


def copied(name: str) -> bool:
    """Whether the script sets the variable ``name`` (with or without its value)."""
    return (
        any(part in name for part in COPIED_NAME_PARTS)
        and not name.startswith(NOT_COPIED_PREFIX)
        and name not in MACHINE_PATHS
        and name not in REPRO_VARIABLES
    )


def looks_secret(name: str) -> bool:
    upper = name.upper()
    return any(part in upper for part in SECRET_NAME_PARTS)


def _own_environment(text: str) -> str:
    """torch's script with the environment it sets first replaced by ``environment``'s (set
    first where torch sets none); ValueError (no script written) where torch sets variables
    in lines not found as torch writes them."""
    try:
        from torch._dynamo.debug_utils import generate_env_vars_string
    except ImportError:  # a torch that copies no variables
        copied_by_torch = ""
    else:  # the call torch made a moment ago, as it lands in the script (dedented)
        copied_by_torch = textwrap.dedent(generate_env_vars_string()).strip()
    head, found, tail = text.partition(copied_by_torch) if copied_by_torch else ("", "", text)
    if found:
        return head + environment(os.environ).rstrip("\n") + tail
    if "os.environ" in text:
        raise ValueError("torch's repro script sets its environment in an unexpected form")
    return environment(os.environ) + text


def write_script(directory: str, stem: str, text: str) -> str:
    """Write ``text`` to a new owner-only file directly in ``directory``; returns its path."""
    folder = Path(directory).expanduser().resolve()
    folder.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    base = _UNSAFE.sub("_", stem)[:100] or "repro"
    for number in itertools.count():
        if number >= MAX_SIBLINGS:
            raise FileExistsError(f"too many repro scripts named {base} in {folder}")
        path = folder / (f"{base}.py" if number == 0 else f"{base}.{number}.py")
        if path.parent != folder:  # cannot happen with the sanitised stem; never write elsewhere
            raise ValueError(f"repro path {path} is outside {folder}")
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        except FileExistsError:
            continue
        with os.fdopen(descriptor, "w") as handle:
            handle.write(text)
        return str(path)
    raise AssertionError("unreachable")


def stem(stage: str, compile_id: str, graph_index: Any) -> str:
    """File name stem: what failed, where; the pid keeps concurrent ranks apart."""
    return f"repro_{stage}_{compile_id.replace('/', '-') or 'none'}_g{graph_index}_{os.getpid()}"


STAGE_COMPILE, STAGE_RUN, STAGE_ACCURACY = REPRO_CHOICES
"""The failures a script is written for (``OTEL_DYNAMO_REPRO_ON`` picks among them)."""

REPRO_FAULT_KINDS = {
    STAGE_COMPILE: (KIND_COMPILE, KIND_NON_LEAF_COMPILE),
    STAGE_RUN: (KIND_RUNTIME,),
    STAGE_ACCURACY: (KIND_ACCURACY,),
}
"""Which injected faults a repro script of a failure at each stage re-injects."""


class ReproScripts:
    """Repro scripts of one graph's failures, from the graph as Dynamo made it."""

    def __init__(
        self,
        graph: AidedGraph,
        compiling: Compiling,
        original: GraphModule | None,
        earlier: Sequence[GraphAid],
    ) -> None:
        self.graph = graph
        self.original = original
        injection = earlier_aid(earlier, FaultInjection)
        self.injected: tuple[FaultSpec, ...] = injection.fired if injection else ()

    @staticmethod
    def wants_original(settings: Settings) -> bool:
        return bool(settings.repro_dir)

    @property
    def records_first_run(self) -> bool:
        return False

    def before_compile(self, compiling: Compiling) -> None:
        pass

    def compile_failed(self, compiling: Compiling) -> None:
        self.write(STAGE_COMPILE, compiling.example_inputs, compiling.span)

    def wrap_compiled(self, compiled: Callable[..., Any], state: RunState) -> Callable[..., Any]:
        """``compiled``, writing a repro script for its first failing run."""
        if self.original is None or not self.graph.recorder.settings.repro_dir:
            return compiled
        written = False

        def run(*args: Any, **kwargs: Any) -> Any:
            nonlocal written
            try:
                return compiled(*args, **kwargs)
            except Exception:
                if not written:
                    written = True
                    self.write(STAGE_RUN, args, state.current_span)
                raise

        return faults.like(run, compiled)

    def write(
        self, stage: str, args: Any, span: Span | None, *, check_accuracy: bool = False
    ) -> None:
        """A repro script for a failure at ``stage``, if configured; its path on ``span``.
        Never raises."""
        settings = self.graph.recorder.settings
        if not settings.repro_dir or stage not in settings.repro_on or self.original is None:
            return
        with guarded(INSTRUMENTATION_ERROR):
            self._write(stage, args, span, check_accuracy)

    def _write(self, stage: str, args: Any, span: Span | None, check_accuracy: bool) -> None:
        graph = self.graph
        reinjected = [fault for fault in self.injected if fault.kind in REPRO_FAULT_KINDS[stage]]
        text = repro_text(
            self.original,
            args,
            backend=graph.backend,
            faults=reinjected,
            check_accuracy=check_accuracy,
        )
        script_stem = stem(stage, graph.compile_id, graph.graph_index)
        path = write_script(str(graph.recorder.settings.repro_dir), script_stem, text)
        if span is not None:
            span.set_attribute(names.ATTR_REPRO_PATH, path)
        fields: dict[str, AttributeValue] = {
            names.ATTR_REPRO_PATH: path,
            names.ATTR_STAGE: stage,
            names.ATTR_COMPILE_ID: graph.compile_id,
            names.ATTR_BACKEND: graph.backend,
            names.ATTR_GRAPH_INDEX: graph.graph_index,
        }
        graph.recorder.log_events.repro_written(span, fields)
