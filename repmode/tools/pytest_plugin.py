"""repmode's pytest plugin, loaded through the ``pytest11`` entry point (see docs/pytest_plugin.md).

- ``@pytest.mark.reproducible(seed=0, strict=True)``: the test's call phase runs inside
  ``repmode.enabled(strict=strict, seed=seed)``.
- fixture ``reproducible``: the same block, as a fixture; its value is the ``Session`` handle
  (``.report()`` with ``strict=False``). With the marker too, it takes the marker's arguments
  and there is still one block; without it, ``seed=0, strict=True``.
- fixture ``golden_digest(name, obj)``: compares ``repmode.digest(obj)`` with
  ``<test dir>/golden/<test module>.json``; ``--repmode-update-golden`` records the values.
- the report header (unless ``-q``) has one line from ``repmode env``: versions, ISA path,
  threads and whether this machine computes repmode's canonical bits.
- ``--repmode``: every test's call phase runs under ``repmode.enabled()`` (strict, no seed).
  ``--repmode-audit``: every test under ``strict=False``; the summary lists the unsupported
  overloads per test. Exclusive with ``--repmode``.

Interactions. Only the call phase is covered: fixtures set up and tear down natively. A test
gets at most one block from the plugin; the marker (or the fixture) is more specific than
``--repmode`` and its arguments win. Under ``--repmode-audit`` every test runs non-strict
whatever its marker says, blocks the test body opens itself do not change that (as under
``repmode audit``), and the fixture's handle is the audit's, so ``.report()`` shows what the
audit saw. A block opened inside the test body reuses the plugin's mode (``Session.__enter__``),
with the inner block's strictness and report until it closes.

The module itself imports neither torch nor repmode's modules until a test asks for the mode
or a digest. (Loading it still runs ``repmode/__init__.py``, which imports torch.)
"""
from __future__ import annotations

import contextlib
import json
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest

_MARKER_HELP = (
    "reproducible(seed=0, strict=True): run the test body inside "
    "repmode.enabled(strict=strict, seed=seed) (seed=None leaves torch's generator alone)"
)
_UPDATE_HINT = "record it with `pytest --repmode-update-golden` (then review and commit the file)"


@dataclass
class _GoldenFile:
    """One ``golden/<module>.json``: what it held when read, and what this run recorded."""

    stored: dict[str, dict[str, str]]
    recorded: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass
class _PluginState:
    strict_all: bool = False
    audit: bool = False
    update_golden: bool = False
    golden: dict[Path, _GoldenFile] = field(default_factory=dict)
    audit_tests: int = 0
    audit_hits: dict[str, list] = field(default_factory=dict)  # nodeid -> UnsupportedRecords
    golden_written: list[str] = field(default_factory=list)


_STATE = pytest.StashKey[_PluginState]()
_SESSION = pytest.StashKey[object]()  # the repmode.Session a test's block uses, once created
_CALL_STARTED = pytest.StashKey[bool]()


def pytest_addoption(parser):
    group = parser.getgroup("repmode", "repmode (bitwise-reproducible PyTorch)")
    group.addoption("--repmode", action="store_true", default=False,
                    help="run every test's body under repmode.enabled() (strict)")
    group.addoption("--repmode-audit", action="store_true", default=False,
                    help="run every test's body under repmode.enabled(strict=False) and list, per "
                         "test, the unsupported ops it ran natively")
    group.addoption("--repmode-update-golden", action="store_true", default=False,
                    help="write the digests passed to golden_digest into golden/<module>.json "
                         "instead of comparing with them")


def pytest_configure(config):
    config.addinivalue_line("markers", _MARKER_HELP)
    state = _PluginState(strict_all=config.getoption("repmode"), audit=config.getoption("repmode_audit"),
                         update_golden=config.getoption("repmode_update_golden"))
    if state.strict_all and state.audit:
        raise pytest.UsageError(
            "--repmode and --repmode-audit exclude each other: --repmode runs every test strict "
            "(unsupported ops fail), --repmode-audit runs them non-strict and lists the unsupported ops"
        )
    config.stash[_STATE] = state


def pytest_report_header(config):
    """One header line (shown unless -q): versions, CPU ISA path, threads, and ``repmode env``'s
    self-check verdict (does this machine compute repmode's canonical bits?), run once per process."""
    try:
        from .env import header_line

        return f"repmode: {header_line()}"
    except Exception as exc:  # noqa: BLE001  (a broken install must not stop the test run)
        return f"repmode: environment report failed: {type(exc).__name__}: {exc}"


def _marker_arguments(seed: int | None = 0, strict: bool = True) -> tuple[int | None, bool]:
    return seed, strict


def _block_settings(item, wants_fixture: bool) -> tuple[bool, int | None] | None:
    """``(strict, seed)`` of the block the test's call phase runs in, or None to run natively."""
    state = item.config.stash[_STATE]
    marker = item.get_closest_marker("reproducible")
    if marker is None and not wants_fixture and not (state.strict_all or state.audit):
        return None
    strict, seed = True, None
    if marker is not None or wants_fixture:
        try:
            seed, strict = _marker_arguments(*marker.args, **marker.kwargs) if marker else _marker_arguments()
        except TypeError as e:
            pytest.fail(f"@pytest.mark.reproducible: {e}; it takes (seed=0, strict=True)", pytrace=False)
    if state.audit:
        strict = False
    return strict, seed


def _session_for(item, wants_fixture: bool = False):
    """The test's ``repmode.Session`` (created on first request, shared by fixture and hook)."""
    session = item.stash.get(_SESSION, None)
    if session is None:
        settings = _block_settings(item, wants_fixture)
        if settings is None:
            return None
        import repmode

        strict, seed = settings
        audit = item.config.stash[_STATE].audit
        session = item.stash[_SESSION] = repmode.enabled(strict=strict, seed=seed, audit=audit)
    return session


@contextlib.contextmanager
def _audited(session):
    """Inside an auditing ``session`` (``repmode.enabled(strict=False, audit=True)``: blocks the test
    opens keep the audit's settings): the report's warnings stay out of the run (the summary lists
    them, and ``-W error`` must not trip)."""
    from repmode.errors import UnsupportedOpWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnsupportedOpWarning)
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    item.stash[_CALL_STARTED] = True
    session = _session_for(item)
    if session is None:
        yield
        return
    state = item.config.stash[_STATE]
    with session:
        if not state.audit:
            yield
            return
        state.audit_tests += 1
        try:
            with _audited(session):
                yield
        finally:
            if session.report():
                state.audit_hits[item.nodeid] = session.report()


@pytest.fixture
def reproducible(request):
    """The ``repmode.Session`` the test body runs in (``seed=0, strict=True`` unless the
    ``reproducible`` marker says otherwise); read ``.report()`` / ``.report_text()``."""
    node = request.node
    if node.stash.get(_CALL_STARTED, False) and node.stash.get(_SESSION, None) is None:
        pytest.fail("the reproducible fixture was requested inside the test body, after its block would have "
                    "opened; request it as an argument or with @pytest.mark.usefixtures", pytrace=False)
    yield _session_for(node, wants_fixture=True)


def _golden_key(item) -> tuple[Path, str]:
    """The test's golden file and its key there: the node id after the module's path."""
    path = Path(item.path)
    return path.parent / "golden" / f"{path.stem}.json", item.nodeid.split("::", 1)[1]


def _golden_file(state: _PluginState, path: Path) -> _GoldenFile:
    golden = state.golden.get(path)
    if golden is None:
        stored = {}
        if path.exists():
            try:
                stored = json.loads(path.read_text())
            except ValueError as e:
                pytest.fail(f"repmode golden file {path} is not valid JSON ({e}); fix it or delete it and "
                            f"{_UPDATE_HINT}", pytrace=False)
            # plain JSON only (nothing in it is ever executed); its shape is {test: {name: digest}}
            if not (isinstance(stored, dict) and all(
                    isinstance(test, str) and isinstance(names, dict)
                    and all(isinstance(n, str) and isinstance(d, str) for n, d in names.items())
                    for test, names in stored.items())):
                pytest.fail(f"repmode golden file {path} is not a {{test: {{name: digest}}}} object of strings; "
                            f"fix it or delete it and {_UPDATE_HINT}", pytrace=False)
        golden = state.golden[path] = _GoldenFile(stored)
    return golden


@pytest.fixture
def golden_digest(request):
    """``golden_digest(name, obj)``: ``repmode.digest(obj)``, checked against the value stored for
    this test and ``name`` in ``golden/<module>.json`` (recorded with ``--repmode-update-golden``)."""
    state = request.config.stash[_STATE]
    path, test_key = _golden_key(request.node)
    seen: dict[str, str] = {}

    def check(name: str, obj) -> str:
        import repmode

        value = repmode.digest(obj)
        if seen.setdefault(name, value) != value:
            pytest.fail(f"golden_digest({name!r}) was called twice in {test_key} with different values "
                        f"({seen[name]} then {value}); give each value its own name", pytrace=False)
        golden = _golden_file(state, path)
        if state.update_golden:
            golden.recorded.setdefault(test_key, {})[name] = value
            return value
        stored = golden.stored.get(test_key, {}).get(name)
        if stored is None:
            where = "has no entry for it" if path.exists() else "does not exist"
            pytest.fail(f"no golden digest {name!r} for {test_key}: {path} {where}; {_UPDATE_HINT}",
                        pytrace=False)
        if stored != value:
            pytest.fail(
                f"golden digest {name!r} of {test_key} changed\n"
                f"  stored: {stored}\n  new:    {value}\n"
                f"(stored in {path}; if the change is intended, rerun with --repmode-update-golden)",
                pytrace=False,
            )
        return value

    return check


def _write_golden(path: Path, golden: _GoldenFile) -> bool:
    """Merge this run's values into the file (entries of other tests and names stay)."""
    merged = {test: dict(names) for test, names in golden.stored.items()}
    for test, names in golden.recorded.items():
        merged.setdefault(test, {}).update(names)
    text = json.dumps(merged, indent=2, sort_keys=True) + "\n"
    if path.exists() and path.read_text() == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return True


def pytest_sessionfinish(session):
    state = session.config.stash.get(_STATE, None)
    if state is None or not state.update_golden:
        return
    for path, golden in sorted(state.golden.items()):
        if golden.recorded and _write_golden(path, golden):
            state.golden_written.append(str(path))


def _shorter_path(call_site: str, start: Path) -> str:
    filename, _, line = call_site.rpartition(":")
    try:
        relative = os.path.relpath(filename, start)
    except ValueError:  # another drive
        return call_site
    return f"{relative}:{line}" if not relative.startswith("..") else call_site


def pytest_terminal_summary(terminalreporter, config):
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    if state.golden_written:
        terminalreporter.write_sep("=", "repmode golden digests")
        for path in state.golden_written:
            terminalreporter.write_line(f"wrote {path}")
    if not state.audit:
        return
    terminalreporter.write_sep("=", "repmode audit")
    if not state.audit_hits:
        terminalreporter.write_line(f"repmode audit: no unsupported ops in the {state.audit_tests} test(s) run "
                                    "under the mode")
        return
    terminalreporter.write_line(f"repmode audit: {len(state.audit_hits)} of {state.audit_tests} test(s) ran "
                                "unsupported ops natively (not reproducible):")
    start = config.invocation_params.dir
    for nodeid, records in state.audit_hits.items():
        terminalreporter.write_line(nodeid)
        for r in records:
            terminalreporter.write_line(f"    {r.overload}  calls: {r.count}  first at "
                                        f"{_shorter_path(r.first_call_site, start)}")


def random_seeder(seed: int) -> None:
    """pytest-randomly's ``pytest_randomly.random_seeder`` entry point (pyproject.toml): it calls this
    with its seed (``-p randomly``: before each test's setup, call and teardown, as it reseeds
    ``random`` and numpy), so torch's generator and repmode's stream are reseeded the same way.
    ``torch.manual_seed`` seeds both (repmode/rng.py hooks it)."""
    import torch

    torch.manual_seed(int(seed) % 2**64)
