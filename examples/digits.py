"""What the digits examples share: the data, the training loop, and the digests they print.

Each example (train_mlp.py, train_cnn.py, train_transformer.py, train_lstm.py) defines a model
and an optimizer and calls :func:`run`. Everything -- the parameters' initialisation, the
shuffled batches, dropout, the training steps and the test logits -- runs inside
``repmode.enabled()`` in strict mode, so every random number comes from repmode's
counter-based stream and every op from its reproducible kernels.
"""
from __future__ import annotations

import argparse
import contextlib
from typing import Callable

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import repmode


def load_data():
    """(x_train, y_train, x_test, y_test): 1797 8x8 images scaled to [0, 1], shipped with
    scikit-learn (no download); x has shape (N, 64)."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)
    return (torch.from_numpy(x_train), torch.from_numpy(y_train),
            torch.from_numpy(x_test), torch.from_numpy(y_test))


def autocast(amp: str | None):
    """``torch.autocast`` on the CPU for ``--amp bf16`` (matrix products and convolutions in
    bfloat16; repmode widens them exactly to float32 and rounds once), else nothing."""
    if amp is None:
        return contextlib.nullcontext()
    return torch.autocast("cpu", dtype={"bf16": torch.bfloat16}[amp])


def train(model, optimizer, x_train, y_train, epochs: int, batch_size: int = 64,
          clip_grad_norm: float | None = None, scheduler_factory=None, amp: str | None = None,
          device: str = "cpu"):
    batches = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_train, y_train), batch_size=batch_size,
                                          shuffle=True, generator=torch.Generator().manual_seed(0))
    scheduler = scheduler_factory(optimizer, epochs * len(batches)) if scheduler_factory else None
    model.train()
    for _ in range(epochs):
        for xb, yb in batches:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            with autocast(amp):
                loss = torch.nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            if clip_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
            optimizer.step()
            if scheduler is not None:
                scheduler.step()


def cosine_schedule(optimizer, total_steps: int):
    """Cosine decay of the learning rate to zero over the whole run (stepped once per batch)."""
    return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total_steps)


def run(description: str, make_model: Callable[[], torch.nn.Module],
        make_optimizer: Callable[[torch.nn.Module], torch.optim.Optimizer], default_epochs: int,
        clip_grad_norm: float | None = None, scheduler_factory=None) -> None:
    """Parse --epochs/--threads, train in strict mode, print the digests and the accuracy."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=default_epochs)
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads before training")
    parser.add_argument("--amp", choices=["bf16"], default=None, help="mixed precision: torch.autocast on the CPU")
    parser.add_argument("--device", default="cpu",
                        help="train on this device (cuda needs repmode's CUDA build; the digests are the CPU's)")
    args = parser.parse_args()
    if args.amp and args.device != "cpu":
        parser.error("--amp is for the CPU")
    if args.threads:
        torch.set_num_threads(args.threads)

    x_train, y_train, x_test, y_test = load_data()

    with repmode.enabled(strict=True, seed=0):
        model = make_model().to(args.device)  # inside the mode: the initial parameters come from repmode's stream
        print(f"initial parameters: {repmode.digest(model)}")
        train(model, make_optimizer(model), x_train, y_train, args.epochs,
              clip_grad_norm=clip_grad_norm, scheduler_factory=scheduler_factory, amp=args.amp, device=args.device)
        model.eval()
        with torch.no_grad(), autocast(args.amp):
            logits = model(x_test.to(args.device)).float()
            accuracy = (logits.argmax(dim=1) == y_test.to(args.device)).float().mean().item()

    print(f"trained parameters: {repmode.digest(model)}")
    print(f"test logits:        {repmode.digest(logits)}")
    print(f"test accuracy:      {accuracy:.4f}")
