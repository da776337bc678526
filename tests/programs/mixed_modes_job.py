"""A user's training job nobody here tuned, for tests/cli/test_report_real_widths.py: a
tiny transformer compiled whole (aot_eager), a post-processing function compiled with
inductor's ``mode="reduce-overhead"`` on the CPU (CUDA graphs skipped), a data-dependent
branch and an ``.item()`` (graph breaks, so torch's resume functions with their long
names), a module counter and a growing sequence (recompiles), then ``model.double()``
under ``torch.no_grad()``. Torch-facing names come out long: the report must show them
whole or cut alike, never split across lines."""

from __future__ import annotations

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.attention = nn.MultiheadAttention(width, 2, batch_first=True)
        self.feed_forward = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)
        )
        self.first_norm = nn.LayerNorm(width)
        self.second_norm = nn.LayerNorm(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.first_norm(x)
        x = x + self.attention(h, h, h, need_weights=False)[0]
        return x + self.feed_forward(self.second_norm(x))


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 64, width: int = 32, layers: int = 2) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList([Block(width) for _ in range(layers)])
        self.head = nn.Linear(width, vocab)
        self.calls = 0

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        x = self.embedding(ids)
        for block in self.blocks:
            x = block(x)
        if x.sum() > 0:
            x = x * 2
        return self.head(x)


def postprocess(logits: torch.Tensor) -> torch.Tensor:
    top = logits.argmax(-1)
    print("first token", top[0, 0].item())
    return top.float().mean()


torch.manual_seed(0)
model = TinyLM()
optimizer = torch.optim.AdamW(model.parameters())
compiled_model = torch.compile(model, backend="aot_eager")
compiled_postprocess = torch.compile(postprocess, mode="reduce-overhead")
for length in (8, 16, 24):
    ids = torch.randint(0, 64, (2, length))
    loss = compiled_model(ids).logsumexp(-1).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    compiled_postprocess(compiled_model(ids).detach())
model.double()
with torch.no_grad():
    compiled_model(torch.randint(0, 64, (2, 8)))
