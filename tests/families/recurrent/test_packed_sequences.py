"""Packed sequences: pack_padded_sequence / pad_packed_sequence and nn.LSTM / nn.GRU / nn.RNN over
packed input (enforce_sorted either way) in strict mode. The defining property (docs/semantics.md
"Packed sequences"): a packed run gives, per sequence, the bits of the module run on that sequence
alone, truncated at its length — outputs and final states; input gradients too for LSTM and RNN
(GRU's h_t receives three gradient terms, which autograd adds in the order of the graph it built:
the packed graph and the padded one add them in different orders, so there they are only close)."""
from __future__ import annotations

import pytest
import torch
from support import THREAD_COUNTS, assert_bitwise_equal, num_threads
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pack_sequence, pad_packed_sequence

import repmode

MODULES = [
    (nn.LSTM, dict()),
    (nn.LSTM, dict(num_layers=2, bidirectional=True)),
    (nn.LSTM, dict(proj_size=3)),
    (nn.GRU, dict(bidirectional=True)),
    (nn.RNN, dict()),
    (nn.RNN, dict(nonlinearity="relu", num_layers=2)),
]
IDS = ["lstm", "lstm-2layer-bi", "lstm-proj", "gru-bi", "rnn-tanh", "rnn-relu-2layer"]
LENGTHS = [6, 3, 5, 2, 6]  # unsorted, with a tie


def _module(cls, kw, dtype, seed=0):
    torch.manual_seed(seed)
    return cls(3, 5, batch_first=True, **kw).to(dtype)


def _states(h):
    return h if isinstance(h, tuple) else (h,)


def _packed_run(m, x, lengths, enforce_sorted=False):
    """Output (padded, batch-first), final states, and the input gradient of a fixed loss."""
    x = x.detach().clone().requires_grad_()
    p = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=enforce_sorted)
    o, h = m(p)
    out, out_lengths = pad_packed_sequence(o, batch_first=True)
    assert out_lengths.tolist() == lengths.tolist()
    loss = (out * out).sum() + sum((s * 0.5).sum() for s in _states(h))
    loss.backward()
    return out.detach(), tuple(s.detach() for s in _states(h)), x.grad


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("cls,kw", MODULES, ids=IDS)
def test_a_packed_run_equals_each_sequence_run_alone_truncated_at_its_length(cls, kw, dtype):
    m = _module(cls, kw, dtype)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(len(LENGTHS), 6, 3, generator=g, dtype=dtype)
    lengths = torch.tensor(LENGTHS)
    with repmode.enabled():
        out, states, x_grad = _packed_run(m, x, lengths)
        for b, L in enumerate(LENGTHS):
            xb = x[b:b + 1, :L].clone().requires_grad_()
            ob, hb = m(xb)
            ((ob * ob).sum() + sum((s * 0.5).sum() for s in _states(hb))).backward()
            assert_bitwise_equal(out[b, :L], ob[0].detach(), f"output of sequence {b}")
            assert not out[b, L:].any(), "padding must stay zero"
            for i, (s, sb) in enumerate(zip(states, _states(hb))):
                assert_bitwise_equal(s[:, b], sb[:, 0].detach(), f"state {i} of sequence {b}")
            if cls is nn.GRU:
                torch.testing.assert_close(x_grad[b, :L], xb.grad[0], rtol=1e-5, atol=1e-6)
            else:
                assert_bitwise_equal(x_grad[b, :L], xb.grad[0], f"input gradient of sequence {b}")
            assert not x_grad[b, L:].any(), "no gradient reaches the padding"


@pytest.mark.parametrize("cls,kw", MODULES, ids=IDS)
def test_packed_runs_have_the_same_bits_at_1_2_3_threads_with_every_weight_gradient(cls, kw):
    g = torch.Generator().manual_seed(2)
    x = torch.randn(len(LENGTHS), 6, 3, generator=g)
    lengths = torch.tensor(LENGTHS)
    results = []
    for threads in THREAD_COUNTS:
        m = _module(cls, kw, torch.float32)
        with num_threads(threads), repmode.enabled():
            out, states, x_grad = _packed_run(m, x, lengths)
        results.append([out, *states, x_grad, *(p.grad for p in m.parameters())])
    for threads, got in zip(THREAD_COUNTS[1:], results[1:]):
        assert_bitwise_equal(got, results[0], f"threads={threads}")


@pytest.mark.parametrize("cls,kw", MODULES, ids=IDS)
def test_sorted_and_unsorted_packing_give_the_same_bits_per_sequence(cls, kw):
    """enforce_sorted=False sorts the lengths (stable, longest first) and restores the order: the
    bits of each sequence do not depend on where it sits in the batch."""
    m = _module(cls, kw, torch.float32)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(len(LENGTHS), 6, 3, generator=g)
    lengths = torch.tensor(LENGTHS)
    order = torch.argsort(lengths, descending=True, stable=True)
    with repmode.enabled():
        out, states, x_grad = _packed_run(m, x, lengths)
        out_s, states_s, x_grad_s = _packed_run(m, x[order], lengths[order], enforce_sorted=True)
    assert_bitwise_equal(out[order], out_s, "output")
    assert_bitwise_equal(x_grad[order], x_grad_s, "input gradient")
    for i, (s, ss) in enumerate(zip(states, states_s)):
        assert_bitwise_equal(s[:, order], ss, f"state {i}")


@pytest.mark.parametrize("cls,kw", MODULES, ids=IDS)
def test_packed_forward_and_gradients_close_to_float64_native_autograd(cls, kw):
    m = _module(cls, kw, torch.float32)
    m64 = _module(cls, kw, torch.float64)
    g = torch.Generator().manual_seed(4)
    x = torch.randn(len(LENGTHS), 6, 3, generator=g)
    lengths = torch.tensor(LENGTHS)
    with repmode.enabled():
        got = _packed_run(m, x, lengths)
    want = _packed_run(m64, x.double(), lengths)
    for a, b in zip([got[0], *got[1], got[2]], [want[0], *want[1], want[2]]):
        torch.testing.assert_close(a.double(), b, rtol=1e-5, atol=1e-6)
    for (name, p), p64 in zip(m.named_parameters(), m64.parameters()):
        torch.testing.assert_close(p.grad.double(), p64.grad, rtol=1e-5, atol=1e-5, msg=name)


@pytest.mark.parametrize("context", [torch.no_grad, torch.inference_mode])
def test_packed_lstm_and_gru_run_under_no_grad_and_inference_mode(context):
    g = torch.Generator().manual_seed(5)
    seqs = [torch.randn(n, 3, generator=g) for n in (4, 2, 5)]
    for cls in (nn.LSTM, nn.GRU):
        m = _module(cls, dict(bidirectional=True), torch.float32)
        with repmode.enabled():
            want, _ = m(pack_sequence(seqs, enforce_sorted=False))
            with context():
                got, _ = m(pack_sequence(seqs, enforce_sorted=False))
        assert_bitwise_equal(got.data, want.data.detach(), cls.__name__)


class PackedClassifier(nn.Module):
    """Embedding -> packed 2-layer bidirectional LSTM -> the final hidden states -> logits."""

    def __init__(self, vocab=20, emb=6, hidden=8, classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb, padding_idx=0)
        self.lstm = nn.LSTM(emb, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.emb(tokens), lengths, batch_first=True, enforce_sorted=False)
        _, (h, _) = self.lstm(packed)
        return self.head(torch.cat([h[-2], h[-1]], dim=1))


def _train_classifier(threads):
    torch.manual_seed(0)
    model = PackedClassifier()
    g = torch.Generator().manual_seed(1)
    lengths = torch.tensor([7, 3, 5, 1, 7, 4])
    tokens = torch.randint(1, 20, (6, 7), generator=g)
    tokens[torch.arange(7)[None, :] >= lengths[:, None]] = 0
    labels = torch.randint(0, 3, (6,), generator=g)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    with num_threads(threads), repmode.enabled(seed=0):
        for _ in range(2):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(tokens, lengths), labels)
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
        with torch.inference_mode():
            logits = model(tokens, lengths)
    return repmode.digest(model.state_dict()), repmode.digest(logits), losses


def test_packed_lstm_classifier_with_unsorted_lengths_trains_with_the_same_digests_at_1_and_2_threads():
    a = _train_classifier(1)
    b = _train_classifier(2)
    assert a == b
    assert all(v == v for v in a[2]) and a[2][1] < a[2][0] * 1.5
