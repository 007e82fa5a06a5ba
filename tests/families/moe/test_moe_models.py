"""Mixture-of-Experts models in strict mode: a tiny top-k routed MoE layer (softmax router, topk,
sort by expert, bincount offsets, _grouped_mm experts, index_add combine) trains two steps with the
same digests at 1 and 2 threads; Hugging Face Mixtral and Qwen2-MoE built tiny from their configs
run forward and backward with each experts implementation (eager, batched_mm, grouped_mm)."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from support import num_threads
from torch import nn

import repmode


class TinyMoE(nn.Module):
    """Router -> top-k experts (SiLU-gated MLPs as 3-D weights, run by _grouped_mm) -> weighted sum."""

    def __init__(self, d=8, hidden=16, experts=4, k=2):
        super().__init__()
        self.k, self.experts = k, experts
        self.router = nn.Linear(d, experts, bias=False)
        self.up = nn.Parameter(torch.randn(experts, d, 2 * hidden) * d ** -0.5)
        self.down = nn.Parameter(torch.randn(experts, hidden, d) * hidden ** -0.5)

    def forward(self, x):
        tokens = x.reshape(-1, x.shape[-1])
        probs = F.softmax(self.router(tokens), dim=-1)
        weights, chosen = torch.topk(probs, self.k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        flat = chosen.reshape(-1)
        expert_ids, order = torch.sort(flat, stable=True)
        offs = torch.cumsum(torch.bincount(expert_ids, minlength=self.experts), 0).to(torch.int32)
        h = tokens[order // self.k]
        gate, value = torch._grouped_mm(h, self.up, offs=offs).chunk(2, dim=-1)
        y = torch._grouped_mm(F.silu(gate) * value, self.down, offs=offs)
        y = y * weights.reshape(-1)[order, None]
        out = torch.zeros_like(tokens).index_add_(0, order // self.k, y)
        return out.reshape(x.shape), F.one_hot(chosen, self.experts).float().mean((0, 1))


def _train(threads):
    torch.manual_seed(0)
    moe = TinyMoE()
    head = nn.Linear(8, 3)
    params = list(moe.parameters()) + list(head.parameters())
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, 5, 8, generator=g)
    y = torch.randint(0, 3, (4, 5), generator=g)
    opt = torch.optim.AdamW(params, lr=0.01)
    losses = []
    with num_threads(threads), repmode.enabled(seed=0):
        for _ in range(2):
            opt.zero_grad()
            out, load = moe(x)
            loss = F.cross_entropy(head(out).reshape(-1, 3), y.reshape(-1)) + 0.01 * (load * load).sum()
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
        with torch.no_grad():
            out, _ = moe(x)
    return repmode.digest([moe.state_dict(), head.state_dict()]), repmode.digest(out), losses


def test_tiny_top_k_moe_layer_trains_with_the_same_digests_at_1_and_2_threads():
    a = _train(1)
    b = _train(2)
    assert a == b
    assert all(v == v for v in a[2]) and a[2][1] < a[2][0] * 1.5


def test_tiny_moe_layer_is_close_to_native_torch():
    torch.manual_seed(0)
    moe = TinyMoE()
    x = torch.randn(4, 5, 8, generator=torch.Generator().manual_seed(2))
    want = _dense_moe(moe, x)  # native, one mm per expert and slot (no _grouped_mm stride limits)
    with repmode.enabled():
        got, _ = moe(x)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def _dense_moe(m, x):
    tokens = x.reshape(-1, x.shape[-1])
    probs = F.softmax(m.router(tokens), dim=-1)
    weights, chosen = torch.topk(probs, m.k, dim=-1)
    weights = weights / weights.sum(dim=-1, keepdim=True)
    out = torch.zeros_like(tokens)
    for slot in range(m.k):
        for e in range(m.experts):
            rows = chosen[:, slot] == e
            gate, value = (tokens[rows] @ m.up[e]).chunk(2, dim=-1)
            out[rows] += (F.silu(gate) * value) @ m.down[e] * weights[rows, slot, None]
    return out.reshape(x.shape)


def _hf_model(kind, impl):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    common = dict(vocab_size=64, hidden_size=32, intermediate_size=32, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, num_experts_per_tok=2, max_position_embeddings=64)
    if kind == "mixtral":
        cfg = transformers.MixtralConfig(num_local_experts=4, **common)
        cls = transformers.MixtralForCausalLM
    else:
        cfg = transformers.Qwen2MoeConfig(num_experts=4, moe_intermediate_size=16, shared_expert_intermediate_size=16,
                                          **common)
        cls = transformers.Qwen2MoeForCausalLM
    cfg._experts_implementation = impl
    return cls(cfg)


def _hf_step(kind, impl, threads=1):
    model = _hf_model(kind, impl)
    ids = torch.randint(0, 64, (2, 10), generator=torch.Generator().manual_seed(3))
    with num_threads(threads), repmode.enabled():
        out = model(input_ids=ids, labels=ids)
        out.loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    return repmode.digest(out.logits), repmode.digest(grads), float(out.loss.detach())


@pytest.mark.parametrize("kind", ["mixtral", "qwen2_moe"])
def test_hugging_face_moe_models_run_forward_and_backward_in_strict_mode(kind):
    """The grouped_mm experts at 1 and 2 threads give the same bits; the eager experts (a linear per
    expert on its tokens, index_add) give the same logits, since every row's product is batch
    invariant and top-2 combines two terms (an addition does not depend on the order of two)."""
    grouped = _hf_step(kind, "grouped_mm")
    assert _hf_step(kind, "grouped_mm", threads=2) == grouped
    assert _hf_step(kind, "eager")[0] == grouped[0]
    assert _hf_step(kind, "batched_mm")[0] == grouped[0]
    assert grouped[2] == grouped[2] and grouped[2] > 0


def test_tiny_moe_layer_in_bfloat16_runs_strict_with_the_same_bits_at_1_and_2_threads():
    """bf16 weights and activations: _grouped_mm widens exactly, computes the float32 order and
    rounds once; the routing runs on the bf16 rules of the other families."""
    results = []
    for threads in (1, 2):
        torch.manual_seed(0)
        m = TinyMoE().to(torch.bfloat16)
        x = torch.randn(4, 5, 8, generator=torch.Generator().manual_seed(4)).bfloat16()
        with num_threads(threads), repmode.enabled():
            out, load = m(x)
            (out.float().square().sum() + load.sum()).backward()
        assert out.dtype == torch.bfloat16 and m.up.grad.dtype == torch.bfloat16
        results.append(repmode.digest([out, m.up.grad, m.down.grad, m.router.weight.grad]))
    assert results[0] == results[1]
