"""The long-run driver's bookkeeping (tests/properties/long_property_run.py): which chunks count, which rerun."""
import json

import long_property_run as runner


def _log(tmp_path, rows):
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _row(seed, passing, failing=0, exit=0, commit="aaa", family="test_losses"):
    return dict(family=family, seed=seed, requested=5000, passing=passing, failing=failing, invalid=0,
                exit=exit, seconds=60.0, commit=commit)


def test_a_later_row_for_the_same_chunk_supersedes_the_earlier_one(tmp_path):
    log = _log(tmp_path, [_row(1, 4000, failing=3, exit=1), _row(2, 5000), _row(1, 5000, commit="bbb")])
    done = runner.finished(log)
    assert done[("test_losses", 1)]["passing"] == 5000 and done[("test_losses", 1)]["commit"] == "bbb"
    assert runner.failed_chunks(log, "ccc") == []
    assert "| `test_losses` | 2 | 10,000 | 0 | 0 | 0 | 2 min | bbb 5,000, aaa 5,000 |" in runner.summary(log)


def test_failed_and_crashed_chunks_are_rerun_only_at_another_commit(tmp_path):
    log = _log(tmp_path, [_row(1, 4000, failing=3, exit=1), _row(2, 0, exit=-11), _row(3, 5000)])
    assert [r["seed"] for r in runner.failed_chunks(log, "bbb")] == [1, 2]
    assert runner.failed_chunks(log, "aaa") == []  # the same commit would fail the same way
    assert "| `test_losses` | 3 | 9,000 | 0 | 3 | 2 | 3 min | aaa 9,000 |" in runner.summary(log)


def test_rerun_failed_can_be_limited_to_the_families_whose_cause_is_fixed(tmp_path, monkeypatch):
    log = _log(tmp_path, [_row(1, 4000, failing=3, exit=1), _row(2, 10, failing=1, exit=1, family="test_mm"),
                          _row(3, 5000)])
    ran = []
    monkeypatch.setattr(runner, "current_commit", lambda: "bbb")
    monkeypatch.setattr(runner, "run_chunk", lambda family, seed, n: ran.append((family, seed))
                        or _row(seed, n, commit="bbb", family=family))
    assert runner.rerun_failed(log, ["test_mm"]) == 0
    assert ran == [("test_mm", 2)]
    assert [r["seed"] for r in runner.failed_chunks(log, "bbb")] == [1]  # test_losses' chunk still waits
