"""Train a 2-layer MLP on scikit-learn's handwritten digits, bit-reproducibly.

Everything -- the parameters' initialisation, the shuffled batches of a DataLoader, dropout,
the training steps and the test logits -- runs inside repmode.enabled() in strict mode, so
every random number comes from repmode's counter-based stream. Run it twice, with different
thread counts, and compare the digests:

    python examples/train_mlp.py --threads 1
    python examples/train_mlp.py --threads 2
"""
from __future__ import annotations

import argparse

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import repmode


def load_data():
    digits = load_digits()  # 1797 8x8 images, shipped with scikit-learn (no download)
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)
    return (torch.from_numpy(x_train), torch.from_numpy(y_train),
            torch.from_numpy(x_test), torch.from_numpy(y_test))


def make_model() -> torch.nn.Module:
    # Called inside the mode: the initial parameters come from repmode's stream.
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                               torch.nn.Linear(128, 10))


def train(model, x_train, y_train, epochs: int, batch_size: int = 64):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    batches = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_train, y_train), batch_size=batch_size,
                                          shuffle=True, generator=torch.Generator().manual_seed(0))
    model.train()
    for _ in range(epochs):
        for xb, yb in batches:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads before training")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    x_train, y_train, x_test, y_test = load_data()

    with repmode.enabled(strict=True, seed=0):
        model = make_model()
        print(f"initial parameters: {repmode.digest(model)}")
        train(model, x_train, y_train, args.epochs)
        model.eval()
        with torch.no_grad():
            logits = model(x_test)
            accuracy = (logits.argmax(dim=1) == y_test).float().mean().item()

    print(f"trained parameters: {repmode.digest(model)}")
    print(f"test logits:        {repmode.digest(logits)}")
    print(f"test accuracy:      {accuracy:.4f}")


if __name__ == "__main__":
    main()
