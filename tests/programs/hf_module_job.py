"""Two Hugging Face models nobody here wrote, each compiled whole as a user would
(``torch.compile(model)``, aot_eager), and one plain function; writes their outputs.

python hf_module_job.py OUT_JSON

Tiny configs built in code, random init from a fixed seed, no downloads. Both models'
forwards run through the same decorator's ``wrapper`` (transformers' ``can_return_tuple``):
the same code, two modules. Run it plain and with ``OTEL_DYNAMO_ENABLED=true``: the
outputs must be equal.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import transformers

VOCAB = 100


def opt() -> torch.nn.Module:
    config = transformers.OPTConfig(
        hidden_size=32,
        num_hidden_layers=2,
        ffn_dim=64,
        num_attention_heads=2,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        word_embed_proj_dim=32,
    )
    return transformers.OPTForCausalLM(config).eval()


def gpt2() -> torch.nn.Module:
    config = transformers.GPT2Config(
        n_layer=2, n_head=2, n_embd=32, vocab_size=VOCAB, n_positions=64
    )
    return transformers.GPT2LMHeadModel(config).eval()


def scaled_sum(x: torch.Tensor, scale: float) -> torch.Tensor:
    """A plain function: its first argument is a tensor, no module."""
    return (x * scale).sin().sum()


def main(out: Path) -> None:
    torch.manual_seed(0)
    ids = torch.randint(0, VOCAB, (2, 12))
    results: dict[str, list[float]] = {}
    with torch.no_grad():
        for name, build in (("opt", opt), ("gpt2", gpt2)):
            compiled = torch.compile(build(), backend="aot_eager")
            results[name] = compiled(input_ids=ids).logits.flatten().tolist()
        plain = torch.compile(scaled_sum, backend="aot_eager")
        results["scaled_sum"] = [plain(torch.linspace(0, 1, 8), 2.0).item()]
    out.write_text(json.dumps(results), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
