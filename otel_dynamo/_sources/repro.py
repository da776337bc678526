"""Standalone repro scripts for failing graphs, written with torch's own repro generator.

The script is ``torch._dynamo.repro.after_dynamo.generate_dynamo_fx_repro_string`` for
the graph as Dynamo captured it (inputs regenerated at random with the same shapes,
strides and dtypes). When otel_dynamo injected faults into that graph, the script
compiles with ``otel_dynamo.traced(<backend>, fault=<those faults, unrestricted>)``, so
it fails the same way in a fresh process; otherwise with the backend's registered name.

Files are created owner-only (0600, in a 0700 directory when we create it), never
overwrite anything (``O_EXCL``; a taken name gets a numbered sibling), and are only ever
written directly inside the configured directory.
"""

from __future__ import annotations

import copy
import itertools
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from otel_dynamo._config.fault_spec import FaultSpec

FILE_MODE = 0o600
DIR_MODE = 0o700
MAX_SIBLINGS = 1000
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
BACKEND_VARIABLE = "_OTEL_DYNAMO_BACKEND"


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
    text = generate_dynamo_fx_repro_string(module, list(args), backend, check_accuracy)
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
