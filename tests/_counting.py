"""Ground truth from torch itself: a backend that counts what Dynamo hands the real one."""

from __future__ import annotations

import collections
from typing import Any

import torch

OP_KINDS = ("call_function", "call_method", "call_module")


class CountingBackend:
    """Counts graphs and ops per compile id, then delegates to the real backend.

    Forwards what Dynamo reads off a backend (``compiler_name``, ``reset``,
    ``get_compiler_config``) so that it compiles exactly what the real backend would.
    """

    def __init__(self, backend: str = "eager") -> None:
        from torch._dynamo.backends.registry import lookup_backend

        self.inner = lookup_backend(backend)
        self.__name__ = f"counting_{backend}"
        self.graphs: collections.Counter[str] = collections.Counter()
        self.ops: collections.Counter[str] = collections.Counter()

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: Any, **kwargs: Any) -> Any:
        compile_id = str(torch._guards.CompileContext.current_compile_id())
        self.graphs[compile_id] += 1
        self.ops[compile_id] += sum(node.op in OP_KINDS for node in gm.graph.nodes)
        return self.inner(gm, example_inputs, **kwargs)

    def reset(self) -> None:
        if hasattr(self.inner, "reset"):
            self.inner.reset()

    def get_compiler_config(self) -> Any:
        getter = getattr(self.inner, "get_compiler_config", None)
        return getter() if getter else None
