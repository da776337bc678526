"""Ground truth from torch itself: a backend that counts what Dynamo hands the real one."""

from __future__ import annotations

import collections
from typing import Any

import torch

OP_KINDS = ("call_function", "call_method", "call_module")


FORWARDED = ("compiler_name", "backend_ctx_ctor")


class CountingBackend:
    """Counts the graphs (and their ops) per compile id that the real backend compiled and
    returned: a call that raises (a Dynamo restart throws the graph away) keeps nothing.

    Forwards what Dynamo reads off a backend (``compiler_name``, ``backend_ctx_ctor``,
    ``reset``, ``get_compiler_config``) so that it compiles exactly what the real backend
    would.
    """

    def __init__(self, backend: str = "eager", *, name: str | None = None) -> None:
        from torch._dynamo.backends.registry import lookup_backend

        self.inner = lookup_backend(backend)
        self.__name__ = name or f"counting_{backend}"
        for attribute in FORWARDED:
            if hasattr(self.inner, attribute):
                setattr(self, attribute, getattr(self.inner, attribute))
        self.graphs: collections.Counter[str] = collections.Counter()
        self.ops: collections.Counter[str] = collections.Counter()

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: Any, **kwargs: Any) -> Any:
        ops = sum(node.op in OP_KINDS for node in gm.graph.nodes)
        compiled = self.inner(gm, example_inputs, **kwargs)
        compile_id = str(torch._guards.CompileContext.current_compile_id())
        self.graphs[compile_id] += 1
        self.ops[compile_id] += ops
        return compiled

    def reset(self) -> None:
        if hasattr(self.inner, "reset"):
            self.inner.reset()

    def get_compiler_config(self) -> Any:
        getter = getattr(self.inner, "get_compiler_config", None)
        return getter() if getter else None
