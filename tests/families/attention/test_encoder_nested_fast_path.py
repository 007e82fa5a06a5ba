"""nn.TransformerEncoder in eval with a src_key_padding_mask: torch's nested-tensor fast path
(_nested_tensor_from_mask, _transformer_encoder_layer_fwd on nested input, to_padded_tensor) runs
in strict mode; the valid tokens get the bits of the padded (slow) path and of each sequence run
alone, the padding +0 as in torch's fast path (docs/semantics.md "TransformerEncoder with a
key-padding mask")."""
from __future__ import annotations

import pytest
import torch
from support import THREAD_COUNTS, assert_bitwise_equal, num_threads
from torch import nn

import repmode


def _encoders(activation="relu", final_norm=True, layers=2, seed=0):
    torch.manual_seed(seed)
    layer = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True, activation=activation)
    norm = nn.LayerNorm(16) if final_norm else None
    fast = nn.TransformerEncoder(layer, layers, norm=norm).eval()
    slow = nn.TransformerEncoder(layer, layers, norm=norm, enable_nested_tensor=False).eval()
    slow.load_state_dict(fast.state_dict())
    assert fast.use_nested_tensor and not slow.use_nested_tensor
    return fast, slow


def _batch(seed=1):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(4, 7, 16, generator=g)
    lengths = torch.tensor([4, 7, 1, 5])
    padding = torch.arange(7)[None, :] >= lengths[:, None]     # True: no token (left aligned)
    return x, padding, lengths


@pytest.mark.parametrize("context", [torch.no_grad, torch.inference_mode])
@pytest.mark.parametrize("activation,final_norm", [("relu", True), ("gelu", False)])
def test_valid_tokens_have_the_bits_of_the_padded_path_and_the_padding_is_zero(context, activation, final_norm):
    fast, slow = _encoders(activation, final_norm)
    x, padding, _ = _batch()
    with repmode.enabled(), context():
        got = fast(x, src_key_padding_mask=padding)
        want = slow(x, src_key_padding_mask=padding)
    valid = padding.logical_not()
    assert_bitwise_equal(got[valid], want[valid], "valid tokens")
    if not final_norm:
        assert not got[padding].any(), "the fast path pads with +0"
    with torch.no_grad():
        native = fast(x, src_key_padding_mask=padding)
    torch.testing.assert_close(got, native, rtol=1e-5, atol=1e-5)


def test_each_sequence_has_the_bits_of_its_run_alone():
    fast, slow = _encoders()
    x, padding, lengths = _batch(seed=2)
    with repmode.enabled(), torch.no_grad():
        got = fast(x, src_key_padding_mask=padding)
        for b, n in enumerate(lengths.tolist()):
            assert_bitwise_equal(got[b, :n], slow(x[b:b + 1, :n])[0], f"sequence {b}")


def test_the_same_bits_at_1_2_3_threads():
    fast, _ = _encoders()
    x, padding, _ = _batch(seed=3)
    outs = []
    for threads in THREAD_COUNTS:
        with num_threads(threads), repmode.enabled(), torch.no_grad():
            outs.append(fast(x, src_key_padding_mask=padding))
    for threads, o in zip(THREAD_COUNTS[1:], outs[1:]):
        assert_bitwise_equal(o, outs[0], f"threads={threads}")


def test_close_to_a_float64_evaluation():
    fast, _ = _encoders()
    x, padding, _ = _batch(seed=4)
    with repmode.enabled(), torch.no_grad():
        got = fast(x, src_key_padding_mask=padding)
    fast64 = fast.double()
    fast64.use_nested_tensor = False
    with torch.no_grad():
        want = fast64(x.double(), src_key_padding_mask=padding)
    valid = padding.logical_not()
    torch.testing.assert_close(got[valid].double(), want[valid], rtol=1e-5, atol=1e-5)


def test_nn_transformer_in_eval_with_a_source_key_padding_mask():
    torch.manual_seed(0)
    t = nn.Transformer(16, 4, 2, 1, 32, batch_first=True).eval()
    x, padding, _ = _batch(seed=5)
    tgt = torch.randn(4, 3, 16, generator=torch.Generator().manual_seed(6))
    with repmode.enabled(), torch.no_grad():
        got = t(x, tgt, src_key_padding_mask=padding, memory_key_padding_mask=padding)
        t.encoder.use_nested_tensor = False
        want = t(x, tgt, src_key_padding_mask=padding, memory_key_padding_mask=padding)
    assert_bitwise_equal(got, want)


def _train_then_evaluate(threads):
    torch.manual_seed(0)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1, batch_first=True), 2)
    head = nn.Linear(16, 3)
    x, padding, _ = _batch(seed=7)
    y = torch.randint(0, 3, (4,), generator=torch.Generator().manual_seed(8))
    opt = torch.optim.AdamW(list(enc.parameters()) + list(head.parameters()), lr=0.01)
    valid = padding.logical_not().unsqueeze(-1).float()
    losses = []
    with num_threads(threads), repmode.enabled(seed=0):
        for _ in range(2):                       # train mode: the padded path, dropout from repmode's stream
            opt.zero_grad()
            h = enc(x, src_key_padding_mask=padding)
            pooled = (h * valid).sum(1) / valid.sum(1)
            loss = nn.functional.cross_entropy(head(pooled), y)
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
        enc.eval()
        with torch.no_grad():                    # eval: the nested fast path
            h = enc(x, src_key_padding_mask=padding)
    return repmode.digest([enc.state_dict(), head.state_dict()]), repmode.digest(h), losses


def test_an_encoder_trains_and_is_evaluated_with_a_key_padding_mask_with_the_same_digests_at_1_and_2_threads():
    a = _train_then_evaluate(1)
    b = _train_then_evaluate(2)
    assert a == b
    assert all(v == v for v in a[2])
