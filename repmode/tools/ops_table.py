"""The table of supported ops, docs/supported_ops.md, generated from the registry.

One row per registered overload: its kind, the dtypes and devices it accepts (declared next to
each registration, see ``registry.DTYPE_TAGS``), and the one-line summary of its order — the
``Order in one line:`` paragraph that opens its family's section of docs/semantics.md (for a
passthrough, its registry reason). Output is deterministic (sorted, no dates), so a test can
compare the committed file with a fresh rendering. An installed package has no docs/: it reads
the summaries its build generated from docs/semantics.md (``order_summaries.py``).

    python -m repmode ops                                 # print the table
    python -m repmode ops mm                              # print aten.mm's rows (or aten.mm.default's)
    python -m repmode ops --write docs/supported_ops.md   # regenerate
    python -m repmode ops --check docs/supported_ops.md   # exit 1 when out of date
"""
from __future__ import annotations

import argparse
import difflib
import sys
from collections import Counter
from pathlib import Path

import torch

from ..kernels import registrations
from ..registry import DTYPE_TAGS, Registration
from . import order_summaries

REPO = Path(__file__).resolve().parents[2]
SEMANTICS = REPO / "docs" / "semantics.md"
DEFAULT_PATH = "docs/supported_ops.md"
REGENERATE = f"python -m repmode ops --write {DEFAULT_PATH}"
SUMMARY_PREFIX = order_summaries.SUMMARY_PREFIX

# family (kernel module) -> its section of docs/semantics.md; a family spread over several
# sections lists (overload-name prefix, section) pairs, the first matching prefix wins.
SECTIONS: dict[str, str | tuple[tuple[str, str], ...]] = {
    "activations": "Activations and small layers",
    "attention": "Attention",
    "batch_norm": "Batch and group normalization",
    "collectives": "Collectives (torch.distributed)",
    "convolution": "Convolution",
    "fft": "FFT",
    "elementwise": "Elementwise",
    "elementwise_more": "More elementwise functions",
    "mathtail": "Inverse trigonometric and hyperbolic functions, tan, log10",
    "special": "Special functions (gamma family)",
    "bessel": "Special functions (Bessel family and orthogonal polynomials)",
    "embedding": (("aten._embedding_bag", "EmbeddingBag"), ("aten.", "Embedding")),
    "foreach": "Optimizers",
    "fused_optim": "Optimizers",
    "grid_sample": "Grid sampling",
    "indexing": (("aten.scatter_add", "Indexed accumulation (`scatter_add`, `index_add`)"),
                 ("aten.index_add", "Indexed accumulation (`scatter_add`, `index_add`)"),
                 ("aten._unsafe_masked_index_put", "Indexed accumulation (`scatter_add`, `index_add`)"),
                 ("aten.unfold_backward", "Indexed accumulation (`scatter_add`, `index_add`)"),
                 ("aten.scatter_reduce", "Indexed reductions (`scatter_reduce`, `index_reduce`) and trace"),
                 ("aten.scatter.reduce", "Indexed reductions (`scatter_reduce`, `index_reduce`) and trace"),
                 ("aten.scatter_.reduce", "Indexed reductions (`scatter_reduce`, `index_reduce`) and trace"),
                 ("aten.scatter.value_reduce", "Indexed reductions (`scatter_reduce`, `index_reduce`) and trace"),
                 ("aten.scatter_.value_reduce", "Indexed reductions (`scatter_reduce`, `index_reduce`) and trace"),
                 ("aten.index_reduce", "Indexed reductions (`scatter_reduce`, `index_reduce`) and trace"),
                 ("aten.trace", "Indexed reductions (`scatter_reduce`, `index_reduce`) and trace"),
                 ("aten.", "Indexing with writes (`index_put`, `put`)")),
    "linalg": "Refused ops",
    "integer": "Integer arithmetic and arange",
    "layer_norm": "Layer and RMS normalization",
    "layers": "Activations and small layers",
    "losses": (("aten.nll_loss2d", "More losses"), ("aten.", "Regression and binary losses, xlogy")),
    "margin_losses": "More losses",
    "matmul": "Matrix products",
    "padding": "Padding and folding",
    "passthrough": "Exact passthrough",
    "pooling": "Pooling",
    "random": "Random numbers",
    "recurrent": "Recurrent layers",
    "resample": "Resampling",
    "reduction": (("aten.sum.", "Sum order"), ("aten.mean.", "Sum order"), ("aten.", "Reductions")),
    "softmax_loss": (("aten._log_softmax", "log_softmax"), ("aten._softmax", "softmax"),
                     ("aten._safe_softmax", "softmax"), ("aten.nll_loss", "nll_loss (and cross_entropy)")),
    "histogram": "Histograms and bincount",
    "linear_cross_entropy": "Linear cross entropy (`F.linear_cross_entropy` with `options=`)",
    "segment_reduce": "Segment reductions (`segment_reduce`)",
    "sorting": "Sorting and selection",
    "training_utils": "Training utilities",
    "moe": "Mixture of Experts (`_grouped_mm`)",
    "ctc": "CTC loss",
}

# How the dtype tags print, in this order.
_TAG_TEXT = {"float32": "f32", "float64": "f64", "widened": "bf16/f16 widened", "half": "bf16/f16",
             "integer": "int", "any": "any", "complex": "c64/c128"}
assert set(_TAG_TEXT) == set(DTYPE_TAGS), "every registry dtype tag needs a printed form here"

# This build compiles CPU kernels only (csrc/cpu); passthroughs are torch's own kernels.
_DEVICES = {"kernel": "cpu", "composite": "cpu", "passthrough": "any", "refusal": "none"}


class TableError(RuntimeError):
    """The registry and docs/semantics.md do not fit together (a family without a section, a
    section without its summary line, an overload without declared dtypes)."""


def in_source_checkout() -> bool:
    """True when this module runs from a source checkout of repmode (docs/semantics.md beside the
    package), False in an installed package (site-packages has no docs/ of ours)."""
    return SEMANTICS.is_file() and (REPO / "pyproject.toml").is_file() and (REPO / "repmode" / "tools").is_dir()


def semantics_summaries(path: Path | None = None) -> dict[str, str]:
    """``{section title: its one-line summary}`` for every ``## `` section of docs/semantics.md
    whose first paragraph starts with ``Order in one line:`` (the paragraph may wrap).

    ``path`` given: that file. Otherwise docs/semantics.md in a source checkout, and in an
    installed package the same summaries as the build wrote them (``order_summaries.json``)."""
    if path is None and not in_source_checkout():
        if not order_summaries.PACKAGED.is_file():
            raise TableError(f"{order_summaries.PACKAGED} not found: this installed repmode lacks the order "
                             "summaries its build generates from docs/semantics.md; reinstall it from a wheel or "
                             "an sdist, or run from a source checkout")
        try:
            return order_summaries.from_json(order_summaries.PACKAGED.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise TableError(f"{order_summaries.PACKAGED}: {exc}; reinstall repmode") from None
    path = SEMANTICS if path is None else path
    if not path.exists():
        raise TableError(f"{path} not found: the table is generated from a source checkout of repmode")
    return order_summaries.parse(path.read_text(encoding="utf-8"))


def section_of(reg: Registration) -> str:
    """The docs/semantics.md section that defines ``reg``'s order (TableError when unmapped)."""
    entry = SECTIONS.get(reg.family)
    if entry is None:
        raise TableError(f"family {reg.family!r} ({reg.name}) has no docs/semantics.md section in "
                         "repmode/tools/ops_table.py SECTIONS")
    if isinstance(entry, str):
        return entry
    for prefix, section in entry:
        if reg.name.startswith(prefix):
            return section
    raise TableError(f"{reg.name} matches none of family {reg.family!r}'s prefixes in "
                     "repmode/tools/ops_table.py SECTIONS")


def order_summary(reg: Registration, summaries: dict[str, str]) -> str:
    """The one-line summary of ``reg``'s order: its reason for a passthrough, else its section's."""
    if reg.kind in ("passthrough", "refusal"):
        return reg.reason
    section = section_of(reg)
    if section not in summaries:
        raise TableError(f"docs/semantics.md has no section '## {section}' opening with "
                         f"'{SUMMARY_PREFIX} ...' (needed by {reg.name}, family {reg.family!r})")
    return summaries[section]


def dtypes_text(reg: Registration) -> str:
    if reg.dtypes is None:
        raise TableError(f"{reg.name} declares no dtypes: pass dtypes= to its register_kernel/register_composite")
    if reg.kind == "refusal":
        return "none (refused)"
    return ", ".join(_TAG_TEXT[t] for t in _TAG_TEXT if t in reg.dtypes)


def devices_text(reg: Registration) -> str:
    return _DEVICES[reg.kind]


def torch_minor() -> str:
    """``2.13``: the registry depends on the torch version (overloads it lacks are not registered)."""
    return ".".join(torch.__version__.split("+")[0].split(".")[:2])


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _anchor(title: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    kept = "".join(c for c in title.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def render_markdown(semantics: Path | None = None) -> str:
    """docs/supported_ops.md: grouped by family, then sorted by overload name."""
    summaries = semantics_summaries(semantics)
    regs = registrations()
    by_family: dict[str, list[Registration]] = {}
    for reg in regs:
        by_family.setdefault(reg.family, []).append(reg)
    kinds = Counter(r.kind for r in regs)
    legend = "; ".join(f"`{_TAG_TEXT[t]}` = {text}" for t, text in DTYPE_TAGS.items())
    out = [
        "# Supported ops",
        "",
        f"Generated from repmode's registry under torch {torch_minor()} by `{REGENERATE}`; do not edit by "
        "hand (tests/core/test_supported_ops_table.py fails when this file is out of date).",
        "",
        f"{len(regs)} overloads (aten, and the c10d collectives of torch.distributed): "
        f"{kinds['kernel']} kernels, {kinds['composite']} composites, {kinds['passthrough']} passthroughs, "
        f"{kinds['refusal']} refusals, in {len(by_family)} families. An op that is not listed "
        "raises `repmode.UnsupportedOpError` in strict mode (CompositeImplicit ops are first decomposed "
        "into listed ones).",
        "",
        "Columns:",
        "",
        "- **overload**: the operator overload repmode's dispatch mode handles.",
        "- **kind**: `kernel` = repmode's own code computes it in its canonical order; `composite` = Python "
        "built only from registered ops; `passthrough` = torch's native kernel, because the result is "
        "bit-exactly defined; `refusal` = deliberately refused, with the reason shown to the user.",
        f"- **dtypes**: the input dtypes repmode runs it on ({legend}). For factories (`rand`, `arange`, ...) "
        "the dtype they create. Other dtypes raise `UnsupportedOpError` in strict mode; with "
        "`strict=False` they run natively and are reported.",
        "- **devices**: `cpu` = this build has CPU kernels only, tensors on other devices are not "
        "supported; `any` = torch's own kernel on any device; `none` = refused everywhere.",
        "- **order**: the one-line summary of the op's evaluation order, from the first line of its section "
        "of [semantics.md](semantics.md); for a passthrough, the reason its native result is exact.",
        "",
        "Families: " + ", ".join(f"[{family}](#{_anchor(family)}) ({len(by_family[family])})"
                                 for family in sorted(by_family)) + ".",
    ]
    for family in sorted(by_family):
        rows = by_family[family]
        sections = sorted({section_of(r) for r in rows})
        out += ["", f"## {family}", "",
                "Defined in semantics.md: " + ", ".join(f"[{s}](semantics.md#{_anchor(s)})" for s in sections)
                + ".", "",
                "| overload | kind | dtypes | devices | order |", "|---|---|---|---|---|"]
        out += [table_row(reg, summaries) for reg in rows]  # registrations() is sorted by name
    return "\n".join(out) + "\n"


def table_row(reg: Registration, summaries: dict[str, str]) -> str:
    return (f"| `{reg.name}` | {reg.kind} | {dtypes_text(reg)} | {devices_text(reg)} | "
            f"{_cell(order_summary(reg, summaries))} |")


def matching(query: str, regs: list[Registration]) -> list[Registration]:
    """The registrations ``query`` names: an overload (``aten.mm.default``), a packet (``aten.mm``) or
    an op name alone (``mm``: every overload of ``aten.mm``, not ``addmm`` or ``mm_``)."""
    q = query.removeprefix("torch.ops.")
    return [r for r in regs if r.name == q or r.name.startswith(q + ".") or r.name.split(".")[1] == q]


def _lookup(queries: list[str]) -> int:
    """Print the rows of the named ops (with their family); exit 1 when one names nothing registered."""
    regs = registrations()
    summaries = semantics_summaries()
    status = 0
    print("| overload | family | kind | dtypes | devices | order |\n|---|---|---|---|---|---|")
    for query in queries:
        found = matching(query, regs)
        if not found:
            names = sorted({r.name.split(".")[1] for r in regs})
            close = difflib.get_close_matches(query.split(".")[1] if query.count(".") >= 1 else query, names, n=3)
            hint = f" (close: {', '.join(close)})" if close else ""
            print(f"repmode ops: {query}: no registered overload{hint}; an op not listed raises "
                  "repmode.UnsupportedOpError in strict mode", file=sys.stderr)
            status = 1
        for reg in found:
            row = table_row(reg, summaries)
            name_cell, rest = row.split(" | ", 1)
            print(f"{name_cell} | {reg.family} | {rest}")
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="repmode ops",
        description="Print the table of supported ops (docs/supported_ops.md) from repmode's registry, the rows of "
                    "the named ops, or write or check the file.")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="print only these ops' rows: aten.mm.default, aten.mm or mm (exit 1 if one is not "
                             "registered)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", metavar="PATH", nargs="?", const=DEFAULT_PATH,
                       help=f"write the table to PATH (default {DEFAULT_PATH}) instead of printing it")
    group.add_argument("--check", metavar="PATH", nargs="?", const=DEFAULT_PATH,
                       help=f"exit 1 when PATH (default {DEFAULT_PATH}) differs from a fresh rendering")
    args = parser.parse_args(argv)
    if args.names and (args.write or args.check):
        parser.error("NAME prints rows: it does not go with --write or --check")
    try:
        if args.names:
            return _lookup(args.names)
        text = render_markdown()
    except TableError as exc:
        print(f"repmode ops table: {exc}", file=sys.stderr)
        return 2
    if args.check is not None:
        path = Path(args.check)
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != text:
            state = "is missing" if current is None else "is out of date"
            print(f"{path} {state}: regenerate it with `python -m repmode ops --write {path}`",
                  file=sys.stderr)
            return 1
        print(f"{path} is up to date ({text.count(chr(10) + '| `')} overloads)")
        return 0
    if args.write is None:
        sys.stdout.write(text)
        return 0
    path = Path(args.write)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"repmode ops: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
