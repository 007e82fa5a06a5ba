"""Train a small Transformer classifier on scikit-learn's handwritten digits, bit-reproducibly:
the 8x8 image is cut into 16 patches of 2x2 pixels (the tokens), embedded by a Linear layer
with a learned position embedding, and classified from the mean of two TransformerEncoderLayers
(GELU, LayerNorm); AdamW with clip_grad_norm_ and a cosine learning-rate schedule.

    python examples/train_transformer.py --threads 1
    python examples/train_transformer.py --threads 2
"""
from __future__ import annotations

import torch
from digits import cosine_schedule, run
from torch import nn


class DigitsTransformer(nn.Module):
    def __init__(self, d_model: int = 64, heads: int = 4, layers: int = 2, patch: int = 2):
        super().__init__()
        self.patch, self.tokens = patch, (8 // patch) ** 2
        self.embed = nn.Linear(patch * patch, d_model)
        self.position = nn.Embedding(self.tokens, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=2 * d_model, dropout=0.1,
                                           activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, 10)

    def forward(self, x):
        # (N, 64) -> (N, 4, 2, 4, 2) -> patches (N, 16, 4) for patch 2: exact data movement.
        p, side = self.patch, 8 // self.patch
        patches = x.view(-1, side, p, side, p).permute(0, 1, 3, 2, 4).reshape(-1, self.tokens, p * p)
        positions = torch.arange(self.tokens, device=x.device)
        h = self.encoder(self.embed(patches) + self.position(positions))
        return self.head(self.norm(h).mean(dim=1))


MODEL = DigitsTransformer  # what benchmarks/run.py times


def make_optimizer(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)


if __name__ == "__main__":
    run(__doc__, DigitsTransformer, make_optimizer, default_epochs=10, clip_grad_norm=1.0,
        scheduler_factory=cosine_schedule)
