"""Processes started inside a block: a forked child (a DataLoader worker under Linux's default 'fork'
start method) does not inherit the block and runs natively, like a 'spawn' or 'forkserver' worker
and like a thread started inside a block; the first child a process forks inside a block says so
once (ForkedProcessWarning)."""
from __future__ import annotations

import json
import logging
import os
import warnings

import pytest
import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode_stack
from torch.utils.data import DataLoader, Dataset

import repmode
import repmode.mode
from repmode.mode import active_mode

CONTEXTS = ["fork", "spawn", "forkserver"]


class Rows(Dataset):
    """Item i is arange(4) + 10 i: exact, so the batches are known."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        return torch.arange(4, dtype=torch.float32) + 10 * i, i


class Augmented(Rows):
    """Item i plus noise drawn in the worker from its own generator (seeded in worker_init_fn)."""

    def __getitem__(self, i):
        x, i = super().__getitem__(i)
        return x + torch.rand(4), i


def seed_worker(worker_id: int) -> None:
    torch.manual_seed(1234 + worker_id)


def _batches(dataset, context):
    with repmode.enabled(seed=0):  # strict
        loader = DataLoader(dataset, batch_size=3, num_workers=2, multiprocessing_context=context,
                            worker_init_fn=seed_worker)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", repmode.ForkedProcessWarning)
            return [(x.clone(), i.clone()) for x, i in loader]


_first_runs: dict = {}  # context -> the batches of its first run (compared across start methods)


@pytest.mark.parametrize("context", CONTEXTS)
def test_dataloader_workers_run_in_strict_mode_and_repeat_seeded_augmentation(context):
    # fork failed here before: the workers inherited the block and default_collate's
    # aten.stack.out raised UnsupportedOpError in worker process 0
    first, second = _batches(Augmented(), context), _batches(Augmented(), context)
    _first_runs[context] = first
    assert [i.tolist() for _, i in first] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    for (x1, i1), (x2, i2) in zip(first, second):
        noise = x1 - (torch.arange(4, dtype=torch.float32) + 10 * i1[:, None].float())
        assert bool(((noise >= 0) & (noise < 1)).all()), "each row is its item plus rand noise"
        assert torch.equal(i1, i2)
        assert torch.equal(x1.view(torch.int32), x2.view(torch.int32)), "the same batches in two runs"


def test_forked_workers_give_the_bits_of_spawned_ones():
    # both run natively with the same per-worker seeds: the start method does not change the batches
    if not {"fork", "spawn"} <= set(_first_runs):
        pytest.skip("needs the fork and spawn runs of the test above")
    for (x1, _), (x2, _) in zip(_first_runs["fork"], _first_runs["spawn"]):
        assert torch.equal(x1.view(torch.int32), x2.view(torch.int32))


def test_exact_collate_in_a_forked_worker():
    batches = _batches(Rows(), "fork")
    for x, i in batches:
        assert torch.equal(x, torch.arange(4, dtype=torch.float32) + 10 * i[:, None].float())


def test_stack_and_cat_out_forms_are_exact_passthroughs():
    parts = [torch.randn(2, 3, generator=torch.Generator().manual_seed(k)) for k in range(3)]
    with repmode.enabled():  # strict
        stacked, joined = torch.empty(3, 2, 3), torch.empty(6, 3)
        torch.stack(parts, out=stacked)
        torch.cat(parts, out=joined)
    assert torch.equal(stacked, torch.stack(parts)) and torch.equal(joined, torch.cat(parts))


def _fork_and_probe(session) -> dict:
    """Fork inside ``session``'s block; the child reports what it saw, leaves the block as os.fork's
    child continuing the parent's code would, and exits (it never returns into pytest)."""
    read, write = os.pipe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pid = os.fork()
        if pid == 0:  # the child
            try:
                report = {"warnings": [str(w.message) for w in caught
                                       if issubclass(w.category, repmode.ForkedProcessWarning)],
                          "active": active_mode() is not None,
                          "compile_notices": [type(f).__name__ for f in
                                              logging.getLogger("torch._dynamo.convert_frame").filters]}
                a = torch.randn(3, 3, generator=torch.Generator().manual_seed(0))
                ev = torch.linalg.eigvals(a)  # refused: strict mode would raise
                report["matches_native"] = torch.equal(ev, torch.linalg.eigvals(a))
                session.__exit__(None, None, None)
                report["stack_after_exit"] = [type(m).__name__ for m in _get_current_dispatch_mode_stack()]
            except BaseException as exc:
                report = {"error": repr(exc)}
            os.write(write, json.dumps(report).encode())
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        text = f.read()
    os.waitpid(pid, 0)
    return json.loads(text)


def test_a_forked_child_leaves_the_block_and_the_first_one_says_so(monkeypatch):
    monkeypatch.setattr(repmode.mode, "_fork_noted", False)
    with repmode.enabled() as session:  # strict
        mode = active_mode()
        first, second = _fork_and_probe(session), _fork_and_probe(session)
        assert active_mode() is mode and not mode.left_by_fork  # the parent stays in its block
        with pytest.raises(repmode.UnsupportedOpError):
            torch.linalg.eigvals(torch.eye(2))
    for report in (first, second):
        assert "error" not in report, report
        assert report["active"] is False and report["matches_native"] is True
        assert report["stack_after_exit"] == []
        assert report["compile_notices"] == []  # the block's torch.compile notice left with it
    assert len(first["warnings"]) == 1 and "forked inside repmode.enabled()" in first["warnings"][0]
    assert "worker_init_fn" in first["warnings"][0]
    assert second["warnings"] == []  # one note per parent process


def test_a_fork_outside_any_block_changes_nothing(monkeypatch):
    monkeypatch.setattr(repmode.mode, "_fork_noted", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pid = os.fork()
        if pid == 0:
            os._exit(0 if not caught else 3)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert repmode.mode._fork_noted is False
