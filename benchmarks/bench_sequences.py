"""Sequences and MoE (issue 25 items 5b, 6a, 7, 8): native torch vs repmode at 2 threads.
CTC loss forward + backward, a packed bidirectional LSTM forward + backward, _grouped_mm forward +
backward (MoE experts), and nn.TransformerEncoder in eval with a key-padding mask (the nested fast
path). Run: PYTHONPATH=. python benchmarks/bench_sequences.py"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from timing import compare
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def _ctc(T=200, B=16, C=32, S=40):
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(T, B, C, generator=g, requires_grad=True)
    targets = torch.randint(1, C, (B, S), generator=g)
    il = torch.randint(T // 2, T + 1, (B,), generator=g)
    tl = torch.randint(S // 2, S + 1, (B,), generator=g)

    def run():
        logits.grad = None
        F.ctc_loss(logits.log_softmax(2), targets, il, tl).backward()
    return run


def _packed_lstm(B=16, T=50, I=64, H=128):
    torch.manual_seed(0)
    m = nn.LSTM(I, H, bidirectional=True, batch_first=True)
    x = torch.randn(B, T, I, requires_grad=True)
    lengths = torch.randint(T // 4, T + 1, (B,))

    def run():
        m.zero_grad()
        x.grad = None
        out, _ = m(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
        pad_packed_sequence(out, batch_first=True)[0].square().sum().backward()
    return run


def _grouped_mm(tokens=4096, experts=8, d=256, h=512):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(tokens, d, generator=g, requires_grad=True)
    w = torch.randn(experts, d, h, generator=g, requires_grad=True)
    counts = torch.multinomial(torch.ones(experts), tokens, replacement=True, generator=g).bincount(minlength=experts)
    offs = torch.cumsum(counts, 0).to(torch.int32)
    gy = torch.randn(tokens, h, generator=g)

    def run():
        x.grad = w.grad = None
        torch._grouped_mm(x, w, offs=offs).backward(gy)
    return run


def _encoder_eval(B=16, L=64, d=128):
    torch.manual_seed(0)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 4, 4 * d, batch_first=True), 2).eval()
    x = torch.randn(B, L, d)
    lengths = torch.randint(L // 4, L + 1, (B,))
    padding = torch.arange(L)[None, :] >= lengths[:, None]

    def run():
        with torch.no_grad():
            enc(x, src_key_padding_mask=padding)
    return run


CASES = [
    ("ctc_loss (T 200, B 16, C 32, targets <= 40) fwd+bwd", _ctc),
    ("packed BiLSTM (B 16, T <= 50, 64 -> 128) fwd+bwd", _packed_lstm),
    ("_grouped_mm (4096 tokens, 8 experts, 256 -> 512) fwd+bwd", _grouped_mm),
    ("TransformerEncoder eval, key-padding mask (16 x 64, d 128, 2 layers)", _encoder_eval),
]


def main() -> list[tuple[str, float, float]]:
    torch.set_num_threads(2)
    rows = []
    for name, make in CASES:
        native, rep = compare(make(), 2, 2, rounds=2)
        rows.append((name, native, rep))
    return rows


if __name__ == "__main__":
    for name, native, rep in main():
        print(f"{name:72s} native {native * 1e3:8.3f} ms  repmode {rep * 1e3:8.3f} ms  ratio {rep / native:5.2f}")
