"""repmode's random state is torch's CPU random state: every torch API that seeds, saves,
restores or forks the CPU generator covers the random ops inside repmode.enabled()
(docs/semantics.md, "Random numbers")."""
from __future__ import annotations

import copy
import io

import pytest
import torch
from support import assert_bitwise_equal

import repmode


def _random_ops() -> list[torch.Tensor]:
    """One of each kind of random op, the dropout forms included."""
    x = torch.ones(40, 33, requires_grad=True)
    y = torch.nn.functional.dropout(x, 0.3, True)
    y.sum().backward()
    return [torch.rand(101), torch.randn(7, 9, dtype=torch.float64), torch.randint(0, 1000, (55,)),
            torch.randperm(64), torch.bernoulli(torch.full((77,), 0.4)), torch.empty(30).exponential_(),
            torch.multinomial(torch.tensor([0.2, 0.3, 0.5]), 20, replacement=True), y.detach(), x.grad,
            torch.native_dropout(torch.ones(50), 0.5, True)[1]]


# ---------------------------------------------------------------- torch.utils.checkpoint

class _Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.a = torch.nn.Linear(24, 48)
        self.b = torch.nn.Linear(48, 16)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * 0.3)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.b(self.drop(torch.relu(self.a(x))))


def _grads(model: torch.nn.Module, x: torch.Tensor, checkpoint: str) -> list[torch.Tensor]:
    model.zero_grad(set_to_none=True)
    x = x.clone().requires_grad_(True)  # the reentrant variant needs an input that requires grad
    weights = torch.linspace(-1, 1, 32 * 16).reshape(32, 16)
    with repmode.enabled(seed=123):
        if checkpoint == "none":
            out = model(x)
        else:
            out = torch.utils.checkpoint.checkpoint(model, x, use_reentrant=(checkpoint == "reentrant"),
                                                    preserve_rng_state=True)
        (out * weights).sum().backward()
    return [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]


@pytest.mark.parametrize("variant", ["reentrant", "non-reentrant"])
def test_checkpointed_gradients_equal_the_plain_gradients(variant):
    """The recomputed forward draws the same dropout masks: torch.utils.checkpoint restores the CPU
    random state, which is repmode's random state."""
    model = _Block()
    x = torch.randn(32, 24, generator=torch.Generator().manual_seed(1))
    plain = _grads(model, x, "none")
    assert_bitwise_equal(_grads(model, x, variant), plain, variant)
    # the masks matter: a model without dropout has other gradients
    model.drop.p = 0.0
    assert not torch.equal(_grads(model, x, "none")[0], plain[0])


# ---------------------------------------------------------------- seeding, saving, forking

def test_fork_rng_restores_the_stream():
    with repmode.enabled(seed=5):
        torch.rand(3)
        with torch.random.fork_rng():
            inside = _random_ops()
        after = _random_ops()
        with torch.random.fork_rng():
            torch.manual_seed(999)  # whatever happens inside the fork stays inside
            torch.rand(1000)
        again = _random_ops()
    assert_bitwise_equal(after, inside)
    assert not torch.equal(again[0], after[0])  # the stream moved on after `after`, not rewound
    with repmode.enabled(seed=5):
        torch.rand(3)
        _random_ops()
        assert_bitwise_equal(_random_ops(), again)


def test_torch_get_and_set_rng_state_replay_the_same_values():
    with repmode.enabled(seed=6):
        torch.randn(10)
        state = torch.get_rng_state()
        first = _random_ops()
        torch.set_rng_state(state)
        second = _random_ops()
        torch.default_generator.set_state(state)
        third = _random_ops()
    assert_bitwise_equal(second, first)
    assert_bitwise_equal(third, first)
    # repmode's own functions are views of the same state
    with repmode.enabled(seed=6):
        torch.randn(10)
        saved = repmode.get_rng_state()
        assert saved == repmode.get_rng_state()
        torch.rand(5)
        assert saved != repmode.get_rng_state()
        repmode.set_rng_state(saved)
        assert_bitwise_equal(_random_ops(), first)
        repmode.set_rng_state(state)  # a torch.get_rng_state() tensor works too
        assert_bitwise_equal(_random_ops(), first)


def test_every_way_of_seeding_torch_seeds_the_stream():
    """torch.manual_seed, torch.default_generator.manual_seed, repmode.manual_seed and
    enabled(seed=) all seed the same state; the same seed then gives the same values."""
    def run(seed_it):
        seed_it()
        with repmode.enabled():
            return _random_ops()

    want = run(lambda: torch.manual_seed(2024))
    assert_bitwise_equal(run(lambda: torch.manual_seed(2024)), want)
    assert_bitwise_equal(run(lambda: torch.default_generator.manual_seed(2024)), want)
    assert_bitwise_equal(run(lambda: repmode.manual_seed(2024)), want)
    with repmode.enabled(seed=2024):
        assert_bitwise_equal(_random_ops(), want)
    assert not torch.equal(run(lambda: torch.manual_seed(2025))[0], want[0])


def test_an_explicit_generator_is_a_stream_of_its_own():
    """Ops given generator=g draw their keys from g only: the default state neither moves nor
    matters; and g gives the values the default generator gives from the same mt19937 state."""
    g = torch.Generator().manual_seed(42)
    with repmode.enabled(seed=1):
        before = torch.get_rng_state()
        a = [torch.rand(50, generator=g), torch.randperm(20, generator=g), torch.randn(9, generator=g)]
        assert torch.equal(torch.get_rng_state(), before)
    g.manual_seed(42)
    with repmode.enabled(seed=77):
        b0 = torch.rand(50, generator=g)
        torch.rand(100)  # the default stream moves; g's does not
        b = [b0, torch.randperm(20, generator=g), torch.randn(9, generator=g)]
    assert_bitwise_equal(b, a)
    with repmode.enabled():
        torch.default_generator.set_state(torch.Generator().manual_seed(42).get_state())
        c = [torch.rand(50), torch.randperm(20), torch.randn(9)]
    assert_bitwise_equal(c, a)


# ---------------------------------------------------------------- state_dict-style resumption

def _train(model, opt, steps: int) -> None:
    for _ in range(steps):
        x = torch.randn(8, 24)
        loss = (torch.nn.functional.dropout(model(x), 0.2, True) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def test_resuming_from_torch_get_rng_state_equals_the_uninterrupted_run():
    with repmode.enabled(seed=0):
        model = _Block()
        start = copy.deepcopy(model.state_dict())
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        _train(model, opt, 4)
        want = [p.detach().clone() for p in model.parameters()]
    with repmode.enabled(seed=0):
        model = _Block()
        model.load_state_dict(start)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        _train(model, opt, 2)
        buf = io.BytesIO()
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "cpu_rng": torch.get_rng_state()}, buf)
    buf.seek(0)
    ckpt = torch.load(buf, weights_only=True)
    with repmode.enabled(seed=31337):  # another seed: the checkpoint's state wins
        model = _Block()
        model.load_state_dict(ckpt["model"])
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        opt.load_state_dict(ckpt["opt"])
        torch.set_rng_state(ckpt["cpu_rng"])
        _train(model, opt, 2)
    assert_bitwise_equal([p.detach() for p in model.parameters()], want)


def test_a_state_of_the_old_stream_is_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="numerics version 2"):
        repmode.set_rng_state({"seed": 3, "offset": 10})


# ---------------------------------------------------------------- Hugging Face gradient checkpointing

def _hf_grads(model, batch, checkpointing: bool) -> list[torch.Tensor]:
    if checkpointing:
        model.gradient_checkpointing_enable()
    else:
        model.gradient_checkpointing_disable()
    model.train()
    model.zero_grad(set_to_none=True)
    with repmode.enabled(seed=11):
        model(**batch).loss.backward()
    return [p.grad.clone() for p in model.parameters() if p.grad is not None]


@pytest.mark.parametrize("arch, attention", [("bert", "eager"), ("bert", "sdpa"), ("gpt2", "eager"), ("gpt2", "sdpa")])
def test_hugging_face_gradient_checkpointing_gives_the_plain_gradients(arch, attention):
    """A tiny BERT and GPT-2 built from configs, dropout 0.2 everywhere, strict mode."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    if arch == "bert":
        config = transformers.BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                         intermediate_size=48, max_position_embeddings=32, hidden_dropout_prob=0.2,
                                         attention_probs_dropout_prob=0.2, attn_implementation=attention)
        model = transformers.BertForMaskedLM(config)
    else:
        config = transformers.GPT2Config(vocab_size=64, n_embd=32, n_layer=2, n_head=2, n_positions=32,
                                         resid_pdrop=0.2, embd_pdrop=0.2, attn_pdrop=0.2,
                                         attn_implementation=attention)
        model = transformers.GPT2LMHeadModel(config)
    ids = torch.randint(0, 64, (3, 16), generator=torch.Generator().manual_seed(2))
    batch = {"input_ids": ids, "labels": ids}
    plain = _hf_grads(model, batch, checkpointing=False)
    checkpointed = _hf_grads(model, batch, checkpointing=True)
    assert len(checkpointed) == len(plain) > 0
    assert_bitwise_equal(checkpointed, plain)
