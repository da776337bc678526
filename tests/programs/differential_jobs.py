"""Real jobs nobody here wrote the way they compile, run plain or traced (the harness in
``tests/enablement/test_traced_is_plain.py`` sets OTEL_DYNAMO_ENABLED=true from outside;
this program never imports otel_dynamo).

    python differential_jobs.py JOB OUT_DIR

Runs job JOB and writes Dynamo's own view of it to ``OUT_DIR/<JOB>.rank<RANK>.json``: each
frame compile as torch's compilation metrics report it (compile id, function, outcome,
recompile reason, graph and guard counts), graph-break reasons, compiled runs per compile
id, torch's counters (frames, graphs, caches), the job's results (losses, outputs) and the
exception it raised, if any. What the view holds is ``View``.
"""

from __future__ import annotations

import collections
import functools
import json
import logging
import os
import random
import re
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypedDict

import torch

TRACE_LOGGER = "torch.__trace"
COMPILE_FIELDS = (
    "co_name",
    "fail_type",
    "recompile_reason",
    "graph_op_count",
    "graph_node_count",
    "graph_input_count",
    "guard_count",
    "shape_env_guard_count",
    "has_guarded_code",
    "restart_reasons",
)
"""Fields of torch's compilation metrics kept per frame compile (those this torch has)."""
COUNTER_GROUPS = ("stats", "aot_autograd", "inductor", "compiled_autograd")
"""torch's counter groups kept whole: graphs, cache hits and misses. Not ``frames``: it
counts every Python frame Dynamo's callback is shown, compiled or not, and under compiled
autograd that includes library code (sympy's, a logging handler's) that runs or not with
the state of its caches; frame compiles are kept one by one from compilation metrics."""
COUNTER_KEYS_SKIPPED = frozenset({"async_compile_cache_miss", "async_compile_cache_hit"})
"""Counters of inductor's worker pool warm-up, which depend on the machine, not the job."""
PROCESS_SPECIFIC = (
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"\b\d{7,}\b"), "<id>"),
    (re.compile(r"/tmp[^\s'\"]*"), "<tmp>"),
)
"""Object addresses, ids and temporary paths differ between any two processes."""
STEPS = 2
SEED = 0


class Compile(TypedDict):
    """One frame compile, as torch's compilation metrics report it."""

    compile_id: str
    fields: dict[str, Any]


class View(TypedDict):
    """Dynamo's own view of one job in one process."""

    job: str
    rank: str
    compiles: list[Compile]
    graph_breaks: dict[str, int]
    compiled_runs: dict[str, int]
    counters: dict[str, dict[str, int]]
    results: list[Any]
    exception: str | None


def normalized(value: Any) -> Any:
    if isinstance(value, str):
        for pattern, replacement in PROCESS_SPECIFIC:
            value = pattern.sub(replacement, value)
        return value
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [normalized(item) for item in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, dict):
        return {str(k): normalized(v) for k, v in value.items()}
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    return normalized(str(value))


# --- the probe: what torch itself says ---------------------------------------------------


class CompilationMetrics(logging.Handler):
    """torch's compilation metrics of each frame compile, from its structured trace."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.compiles: list[Compile] = []

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None) or {}
        metrics = metadata.get("compilation_metrics")
        if metrics is None:
            return
        compile_id = _compile_id(metadata) or str(metrics.get("compile_id", "?"))
        fields = {key: normalized(metrics[key]) for key in COMPILE_FIELDS if key in metrics}
        self.compiles.append(Compile(compile_id=compile_id, fields=fields))


def _compile_id(metadata: dict[str, Any]) -> str | None:
    frame, attempt = metadata.get("frame_id"), metadata.get("frame_compile_id")
    if frame is None:
        return None
    return f"{frame}/{attempt}"


class CompiledRuns:
    """Runs of each compiled graph, keyed by compile id: what Dynamo installed for a
    compile is wrapped where Dynamo gets it from the backend (OutputGraph), the same in
    a plain and a traced process."""

    def __init__(self) -> None:
        self.runs: collections.Counter[str] = collections.Counter()

    def install(self) -> None:
        from torch._dynamo.output_graph import OutputGraph
        from torch._guards import CompileContext

        original = OutputGraph.call_user_compiler
        runs = self.runs

        @functools.wraps(original)
        def call_user_compiler(graph: Any, *args: Any, **kwargs: Any) -> Any:
            compiled = original(graph, *args, **kwargs)
            key = str(CompileContext.current_compile_id())
            runs[key] += 0

            def run(*run_args: Any, **run_kwargs: Any) -> Any:
                runs[key] += 1
                return compiled(*run_args, **run_kwargs)

            if getattr(compiled, "_boxed_call", False):
                run._boxed_call = True  # type: ignore[attr-defined]
            return run

        OutputGraph.call_user_compiler = call_user_compiler  # type: ignore[method-assign]


def counters() -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    from torch._dynamo.utils import counters as torch_counters

    breaks = {normalized(str(k)): int(v) for k, v in torch_counters["graph_break"].items()}
    kept = {
        group: {
            str(k): int(v)
            for k, v in torch_counters[group].items()
            if k not in COUNTER_KEYS_SKIPPED and isinstance(v, int)
        }
        for group in COUNTER_GROUPS
        if group in torch_counters
    }
    return breaks, kept


# --- the jobs ------------------------------------------------------------------------------


class ResidualMLP(torch.nn.Module):
    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.up = torch.nn.Linear(width, 2 * width)
        self.down = torch.nn.Linear(2 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(torch.relu(self.up(x)))


class WithBreak(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.head = torch.nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.fc(x))
        print("a print in forward: a graph break")
        return self.head(x)


RESULTS: list[float] = []
"""Every value the job computed, in order (kept up to an exception)."""


def _value(tensor: torch.Tensor) -> None:
    """Keep what the job computed (a tensor's sum, rounded) among its results."""
    RESULTS.append(round(float(tensor.detach().double().sum()), 6))


def _train(blocks: torch.nn.Module, batches: Iterator[torch.Tensor]) -> None:
    """Training steps (the last with an input that requires grad: a recompile)."""
    optimizer = torch.optim.SGD(blocks.parameters(), lr=0.01)
    for step, batch in enumerate(batches):
        optimizer.zero_grad()
        hidden = batch.requires_grad_(step == STEPS - 1)
        for block in blocks:  # type: ignore[attr-defined]
            hidden = block(hidden)
        loss = hidden.pow(2).mean()
        loss.backward()
        optimizer.step()
        _value(loss)


def _batches(*shape: int) -> Iterator[torch.Tensor]:
    return (torch.randn(*shape) for _ in range(STEPS))


def regional_blocks() -> None:
    """Twelve identical residual blocks, each ``block.compile(backend="aot_eager")``."""
    blocks = torch.nn.ModuleList(ResidualMLP() for _ in range(12))
    for block in blocks:
        block.compile(backend="aot_eager")
    _train(blocks, _batches(4, 16))


def regional_gpt2() -> None:
    """Three GPT-2 blocks (transformers, tiny config), each compiled on its own."""
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block

    config = GPT2Config(n_embd=32, n_head=2, n_layer=3, n_positions=16, vocab_size=64)
    blocks = torch.nn.ModuleList(GPT2Block(config, layer_idx=i) for i in range(3))
    for block in blocks:
        block.compile(backend="aot_eager")

    class First(torch.nn.Module):  # GPT2Block returns a tuple on some versions
        def __init__(self, block: torch.nn.Module) -> None:
            super().__init__()
            self.block = block

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out = self.block(x)
            return out[0] if isinstance(out, tuple) else out

    _train(torch.nn.ModuleList(First(b) for b in blocks), _batches(2, 8, 32))


def model_and_loss() -> None:
    """A model with a graph break and its loss, compiled separately (torch.compile)."""
    model = torch.compile(WithBreak(), backend="aot_eager")
    loss_fn = torch.compile(torch.nn.functional.mse_loss, backend="aot_eager")
    target = torch.randn(4, 2)
    for batch in _batches(4, 8):
        loss = loss_fn(model(batch), target)
        loss.backward()
        _value(loss)


def _scaled(x: torch.Tensor) -> torch.Tensor:
    return torch.sin(x) * 2 + 1


def _shifted(x: torch.Tensor) -> torch.Tensor:
    return torch.cos(x) - 1


def _returns_forward(gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
    """A user's own backend: runs the graph as Dynamo captured it."""
    return gm.forward


def _configurable(gm: torch.fx.GraphModule, example_inputs: Any, *, scale: int) -> Any:
    """A user's backend with an option, meant to be bound with functools.partial."""
    return gm.forward


def same_function_same_backend() -> None:
    """One function compiled twice with the same backend name (and a callable twice)."""
    first = torch.compile(_scaled, backend="aot_eager")
    second = torch.compile(_scaled, backend="aot_eager")
    x = torch.randn(8)
    for compiled in (first, second, first):
        _value(compiled(x))
    for _ in range(2):
        _value(torch.compile(_shifted, backend=_returns_forward)(x))


def same_function_different_backends() -> None:
    """One function compiled with two backends, and with two functools.partial backends."""
    x = torch.randn(8)
    for backend in ("eager", "aot_eager", "eager"):
        _value(torch.compile(_scaled, backend=backend)(x))
    for _ in range(2):
        partial = functools.partial(_configurable, scale=2)  # a new partial each time
        _value(torch.compile(_shifted, backend=partial)(x))


def optimize_and_module_compile() -> None:
    """``torch._dynamo.optimize`` and ``Module.compile``."""
    x = torch.randn(4, 16)
    for _ in range(2):
        _value(torch._dynamo.optimize("aot_eager")(_scaled)(x))
    torch._dynamo.reset()
    module = ResidualMLP()
    module.compile(backend="eager", dynamic=False)
    for _ in range(2):
        _value(module(x))


def dynamic_shapes() -> None:
    """Sizes that change: automatic dynamic after a recompile, and ``dynamic=True``."""
    automatic = torch.compile(_scaled, backend="aot_eager")
    marked = torch.compile(lambda x: x.sum(0) * 3, backend="aot_eager", dynamic=True)
    for size in (4, 6, 8, 8):
        _value(automatic(torch.randn(size, 3)))
        _value(marked(torch.randn(size, 3)))


def compiled_autograd() -> None:
    """Compiled autograd: a whole training step compiled (forward, backward, optimizer
    step), its backward compiled by Dynamo too."""
    torch._dynamo.config.compiled_autograd = True
    try:
        _whole_step(ResidualMLP(), "aot_eager", (4, 16))
    finally:
        torch._dynamo.config.compiled_autograd = False


def _whole_step(model: torch.nn.Module, backend: str, shape: tuple[int, ...]) -> None:
    """Training steps compiled whole: forward, loss, backward and the optimizer's step
    inside one compiled function (a backward compiled lazily, inside a compiled frame)."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    @torch.compile(backend=backend)
    def step(batch: torch.Tensor) -> torch.Tensor:
        loss = model(batch).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    for batch in _batches(*shape):
        _value(step(batch))
    _value(torch.cat([p.detach().flatten() for p in model.parameters()]))


def training_step() -> None:
    """A whole training step compiled with aot_eager."""
    _whole_step(ResidualMLP(), "aot_eager", (4, 16))


def training_step_inductor() -> None:
    """A whole training step compiled with inductor, twice: the second time, after
    ``torch._dynamo.reset()``, from inductor's FX graph and AOT Autograd caches."""
    model = ResidualMLP(8)
    for _ in range(2):
        _whole_step(model, "inductor", (4, 8))
        torch._dynamo.reset()


def dynamic_step_inductor() -> None:
    """A step with ``.backward()`` inside, compiled with inductor, whose batch size
    changes (4, 4, 6, 4): the recompile is dynamic, and torch's trace records the stacks of
    the guards inductor and AOT Autograd add while the forward and the backward compile
    beneath the traced backend."""
    weight = torch.randn(8, 8, requires_grad=True)

    @torch.compile(backend="inductor")
    def step(x: torch.Tensor) -> torch.Tensor:
        out = (x @ weight).relu()
        out.sum().backward()
        return out.detach().sum(dim=0)

    for size in (4, 4, 6, 4):
        _value(step(torch.randn(size, 8)))
    _value(weight.grad)


def backward_inside() -> None:
    """``.backward()`` inside a compiled function, no optimizer: its backward compiles
    lazily while Dynamo evaluates the compiled function's frame."""
    weight = torch.randn(8, 8, requires_grad=True)

    @torch.compile(backend="aot_eager")
    def step(x: torch.Tensor) -> torch.Tensor:
        out = (x @ weight).relu()
        out.sum().backward()
        return out.detach() * 2

    for batch in _batches(4, 8):
        _value(step(batch))
    _value(weight.grad)


class Checkpointed(torch.nn.Module):
    """Two blocks, each run under ``torch.utils.checkpoint`` (recomputed in backward)."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList(ResidualMLP() for _ in range(2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
        return x


def checkpointed() -> None:
    """``torch.utils.checkpoint`` inside a compiled module, trained (backward outside)."""
    model = torch.compile(Checkpointed(), backend="aot_eager")
    for batch in _batches(4, 16):
        loss = model(batch.requires_grad_()).pow(2).mean()
        loss.backward()
        _value(loss)


def hooks() -> None:
    """Module forward hooks and a tensor hook, under a compiled module and step."""
    model = ResidualMLP()
    seen: list[float] = []
    model.up.register_forward_hook(lambda _m, _i, out: out * 1.5)
    model.register_forward_pre_hook(lambda _m, args: (args[0] + 1,))
    compiled = torch.compile(model, backend="aot_eager")
    for batch in _batches(4, 16):
        batch.requires_grad_()
        batch.register_hook(lambda grad: grad * 2)
        out = compiled(batch)
        out.register_hook(lambda grad: seen.append(float(grad.sum())) or grad)
        out.sum().backward()
        _value(out)
        _value(batch.grad)
    RESULTS.extend(round(value, 6) for value in seen)


def func_transforms() -> None:
    """``torch.func.grad`` and ``vmap`` under compile."""

    def loss(weight: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.sin(x @ weight).pow(2).sum()

    grad_fn = torch.compile(torch.func.grad(loss), backend="aot_eager")
    batched = torch.compile(torch.func.vmap(torch.sin), backend="aot_eager")
    weight = torch.randn(8, 4)
    for batch in _batches(3, 8):
        _value(grad_fn(weight, batch))
        _value(batched(batch))


class ScaledRelu(torch.autograd.Function):
    """A custom autograd function: relu forward, its gradient scaled by 3."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return grad * (x > 0) * 3


def autograd_function() -> None:
    """A custom ``autograd.Function`` inside a compiled training step."""
    weight = torch.randn(8, 8, requires_grad=True)

    @torch.compile(backend="aot_eager")
    def step(x: torch.Tensor) -> torch.Tensor:
        out = ScaledRelu.apply(x @ weight)
        out.sum().backward()
        return out.detach()

    for batch in _batches(4, 8):
        _value(step(batch))
    _value(weight.grad)


class BackendFailure(RuntimeError):
    """What the user's backend raises."""


def _failing_backend(gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
    """A user's backend that raises on every graph."""
    raise BackendFailure(f"cannot compile a graph of {len(gm.graph.nodes)} nodes")


def backend_raises() -> None:
    """A backend that raises: torch's BackendCompilerFailed reaches the user."""
    _value(torch.compile(_scaled, backend=_failing_backend)(torch.randn(8)))


def backend_raises_suppressed() -> None:
    """A backend that raises with ``suppress_errors``: Dynamo logs the traceback and the
    frame runs eagerly."""
    torch._dynamo.config.suppress_errors = True
    try:
        _value(torch.compile(_scaled, backend=_failing_backend)(torch.randn(8)))
    finally:
        torch._dynamo.config.suppress_errors = False


def transformers_step() -> None:
    """A real transformers model (GPT-2, tiny config, random init): its whole training
    step compiled, loss computed by the model."""
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_embd=32, n_head=2, n_layer=2, n_positions=16, vocab_size=64)
    model = GPT2LMHeadModel(config)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    @torch.compile(backend="aot_eager")
    def step(ids: torch.Tensor) -> torch.Tensor:
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    for _ in range(STEPS):
        _value(step(torch.randint(0, 64, (2, 8))))


def set_stance() -> None:
    """``torch.compiler.set_stance``: forced eager runs, then compiled, then fail on a
    recompile (the user's exception)."""
    fn = torch.compile(_scaled, backend="aot_eager")
    with torch.compiler.set_stance("force_eager"):
        _value(fn(torch.randn(4)))
    _value(fn(torch.randn(4)))
    with torch.compiler.set_stance("eager_on_recompile"):
        _value(fn(torch.randn(4, 2)))
    with torch.compiler.set_stance("fail_on_recompile"):
        _value(fn(torch.randn(5, 2, 2)))


def recompile_limit() -> None:
    """A function recompiled for each Python int it sees, past the recompile limit."""
    torch._dynamo.config.recompile_limit = 3
    torch._dynamo.config.automatic_dynamic_shapes = False

    @torch.compile(backend="aot_eager")
    def scale(x: torch.Tensor, k: int) -> torch.Tensor:
        return x * k

    x = torch.randn(4)
    for k in range(6):
        _value(scale(x, k))


def fullgraph_break() -> None:
    """``fullgraph=True`` on a function with a graph break: torch's error."""
    model = torch.compile(WithBreak(), backend="aot_eager", fullgraph=True)
    _value(model(torch.randn(4, 8)))


def ddp_step() -> None:
    """One rank of a DDP job (gloo) whose whole training step is compiled; its buckets
    split the graph (DDPOptimizer)."""
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    dist.init_process_group("gloo")  # torn down by main(), after the view is written
    torch.manual_seed(SEED)
    # About 1 MB of parameters a block, 1 MB buckets: the DDPOptimizer splits the graph.
    model = torch.nn.Sequential(*(ResidualMLP(256) for _ in range(3)))
    torch.manual_seed(SEED + dist.get_rank())
    _whole_step(DistributedDataParallel(model, bucket_cap_mb=1), "aot_eager", (4, 256))
    dist.barrier()


JOBS: dict[str, Callable[[], None]] = {
    job.__name__: job
    for job in (
        regional_blocks,
        regional_gpt2,
        model_and_loss,
        same_function_same_backend,
        same_function_different_backends,
        optimize_and_module_compile,
        dynamic_shapes,
        compiled_autograd,
        training_step,
        training_step_inductor,
        dynamic_step_inductor,
        backward_inside,
        checkpointed,
        hooks,
        func_transforms,
        autograd_function,
        backend_raises,
        backend_raises_suppressed,
        transformers_step,
        ddp_step,
        set_stance,
        recompile_limit,
        fullgraph_break,
    )
}


def _seed_sympy() -> None:
    """Seed the random source sympy's assumption system shuffles with (it evaluates
    symbolic shapes; under compiled autograd, with Dynamo's frame evaluation on, so which
    of its frames Dynamo is shown otherwise differs from run to run)."""
    try:
        import sympy.core.random
    except ImportError:  # a torch without sympy
        return
    sympy.core.random.seed(SEED)


def main() -> None:
    job, out_dir = sys.argv[1], Path(sys.argv[2])
    rank = os.environ.get("RANK", "0")
    torch.manual_seed(SEED)
    random.seed(SEED)
    _seed_sympy()
    metrics = CompilationMetrics()
    trace = logging.getLogger(TRACE_LOGGER)
    trace.addHandler(metrics)
    trace.setLevel(logging.DEBUG)
    runs = CompiledRuns()
    runs.install()
    exception = None
    try:
        JOBS[job]()
    except Exception as error:  # the user's exception is part of what must not change
        exception = normalized(f"{type(error).__module__}.{type(error).__qualname__}: {error}")
        traceback.print_exc()  # its text too: compared on stderr
    breaks, kept = counters()
    view = View(
        job=job,
        rank=rank,
        compiles=metrics.compiles,
        graph_breaks=breaks,
        compiled_runs=dict(sorted(runs.runs.items())),
        counters=kept,
        results=RESULTS,
        exception=exception,
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    written = out_dir / f"{job}.rank{rank}.json"
    partial = written.with_suffix(".partial")
    partial.write_text(json.dumps(view, indent=1, default=str))
    partial.replace(written)  # whole or absent: the harness may read it before we exit
    _tear_down()


def _tear_down() -> None:
    """End a distributed job's process group, after its view is safe: gloo's teardown
    deadlocks now and then in torch itself, plain or traced (the harness then ends the
    process and keeps the view)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
