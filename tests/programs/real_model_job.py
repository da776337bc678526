"""A real model nobody here wrote, compiled as a user would; writes torch's own ground truth.

python real_model_job.py MODEL BACKEND TRUTH_JSON

TRUTH_JSON "-" runs the job as it is, with no ground truth taken (for benches).

MODEL: gpt2 (trained a few AdamW steps, a longer sequence at the last), llama (generate()),
bert (inference at changing batch sizes), model_and_loss (a decoder and its loss compiled
separately, the loss with the eager backend). Tiny configs built in code, random init, no
downloads. Run it with OTEL_DYNAMO_ENABLED=true: torch.compile gets a counting backend
around the real one and the environment wraps that, so the counts are of exactly the
calls the traced backend saw. The truth file holds, per compile id, what torch says:
graphs the real backend compiled and returned, their ops, Dynamo's structured-trace
records (frame starts, graph-break and recompile artifacts) and compilation metrics.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _counting import CountingBackend  # graphs the real backend compiled and returned
from _dynamo_truth import dynamo_stream  # Dynamo's structured-trace records

VOCAB = 128


def compile_id_of(record: dict[str, Any]) -> str | None:
    if record.get("frame_id") is None:
        return None
    prefix = f"!{record['compiled_autograd_id']}/" if "compiled_autograd_id" in record else ""
    return f"{prefix}{record['frame_id']}/{record['frame_compile_id']}"


class Compilers:
    """How the job compiles: the model with ``backend``, a separate loss with ``loss``."""

    def __init__(self, backend: Any, loss_backend: Any) -> None:
        self.backend, self.loss_backend = backend, loss_backend

    def __call__(self, fn: Any) -> Any:
        return torch.compile(fn, backend=self.backend)

    def loss(self, fn: Any) -> Any:
        return torch.compile(fn, backend=self.loss_backend)


def gpt2(compile_: Compilers) -> None:
    config = transformers.GPT2Config(
        n_layer=2, n_head=2, n_embd=32, vocab_size=VOCAB, n_positions=64
    )
    model = transformers.GPT2LMHeadModel(config)
    compiled = compile_(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(4):
        ids = torch.randint(0, VOCAB, (2, 16 if step < 3 else 24))
        compiled(input_ids=ids, labels=ids).loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def llama(compile_: Compilers) -> None:
    config = transformers.LlamaConfig(
        num_hidden_layers=2,
        hidden_size=32,
        num_attention_heads=2,
        num_key_value_heads=1,
        intermediate_size=64,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        pad_token_id=0,
    )
    model = transformers.LlamaForCausalLM(config).eval()
    model.forward = compile_(model.forward)
    for prompt in (6, 9):
        ids = torch.randint(1, VOCAB, (1, prompt))
        model.generate(ids, max_new_tokens=4, do_sample=False)


def bert(compile_: Compilers) -> None:
    config = transformers.BertConfig(
        num_hidden_layers=2,
        hidden_size=32,
        num_attention_heads=2,
        intermediate_size=64,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        num_labels=3,
    )
    model = transformers.BertForSequenceClassification(config).eval()
    compiled = compile_(model)
    with torch.no_grad():
        for batch in (1, 2, 4, 3):
            compiled(input_ids=torch.randint(0, VOCAB, (batch, 12)))


def model_and_loss(compile_: Compilers) -> None:
    config = transformers.GPT2Config(
        n_layer=1, n_head=2, n_embd=32, vocab_size=VOCAB, n_positions=64
    )
    model = transformers.GPT2LMHeadModel(config)
    compiled = compile_(model)

    def loss_fn(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        flat = logits.reshape(-1, logits.shape[-1])
        return torch.nn.functional.cross_entropy(flat, labels.reshape(-1))

    loss = compile_.loss(loss_fn)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(3):
        ids = torch.randint(0, VOCAB, (2, 8 if step < 2 else 12))
        loss(compiled(input_ids=ids).logits, ids).backward()
        optimizer.step()
        optimizer.zero_grad()


MODELS = {"gpt2": gpt2, "llama": llama, "bert": bert, "model_and_loss": model_and_loss}


def main(model: str, backend: str, truth_path: str) -> None:
    torch.manual_seed(0)
    if truth_path == "-":
        MODELS[model](Compilers(backend, "eager"))
        return
    counter = CountingBackend(backend, name=backend)
    loss_counter = CountingBackend("eager", name="eager")
    with dynamo_stream() as records:
        MODELS[model](Compilers(counter, loss_counter))
    truth = {
        "graphs": dict(counter.graphs + loss_counter.graphs),
        "ops": dict(counter.ops + loss_counter.ops),
        "frame_starts": [compile_id_of(r) for r in records.records if "dynamo_start" in r],
        "graph_breaks": [
            compile_id_of(r)
            for r in records.records
            if r.get("artifact", {}).get("name") == "dynamo_graph_break_reason"
        ],
        "recompiles": [
            compile_id_of(r)
            for r in records.records
            if r.get("artifact", {}).get("name") == "recompile_reasons"
        ],
        "guards": {
            str(r["compilation_metrics"]["compile_id"]): r["compilation_metrics"]["guard_count"]
            for r in records.records
            if "compilation_metrics" in r
        },
        "failed": sorted(
            str(r["compilation_metrics"]["compile_id"])
            for r in records.records
            if "compilation_metrics" in r and r["compilation_metrics"].get("fail_type")
        ),
        "compile_us": sum(
            r[name].get("duration_us") or 0
            for r in records.records
            for name in ("compilation_metrics", "bwd_compilation_metrics")
            if name in r
        ),
    }
    with open(truth_path, "w") as out:
        json.dump(truth, out)


if __name__ == "__main__":
    main(*sys.argv[1:4])
