"""Compare two traces (``repmode diff``) and rerun one recorded op (``repmode replay``)."""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.utils._pytree

from ..digest import digest as digest_of
from ..mode import enabled
from .trace import SAFE_GLOBALS, load_values, read_trace, values_path


@dataclass
class Divergence:
    seq: int                 # the first record (1-based) where the runs differ; 0 when identical
    kind: str                # "identical", "output", "op" (different ops at seq) or "length"
    matched: int             # records equal before seq
    text: str                # the human-readable report


def _describe_run(head: dict, records: list) -> str:
    threads = head.get("end_threads", head["threads"])
    text = (f"{head['mode']}, torch {head['torch']}, {head['machine']} {head.get('cpu_isa', '')}, {threads} threads, "
            f"{len(records)} ops")
    return text if head["complete"] else text + ", incomplete: the run stopped while tracing"


def _where(rec: dict) -> str:
    where = f"{rec['op']} ({rec['phase']}"
    if rec.get("node"):
        where += f", {rec['node']}"
    return where + f") at {rec['site']}"


def _value_difference(a: torch.Tensor, b: torch.Tensor) -> str:
    if a.shape != b.shape or not (a.is_floating_point() and b.is_floating_point()):
        return "values kept, but not comparable (shape or dtype differ)"
    a64, b64 = a.double(), b.double()
    both_nan = torch.isnan(a64) & torch.isnan(b64)
    diff = torch.where(both_nan, torch.zeros_like(a64), (a64 - b64).abs())
    rel = diff / torch.maximum(a64.abs(), b64.abs()).clamp_min(torch.finfo(torch.float64).tiny)
    differing = int(((diff != 0) | (torch.isnan(a64) != torch.isnan(b64))).sum())
    return (f"max |a-b| = {diff.max().item():.6g}, max relative = {rel.max().item():.6g}, "
            f"{differing} of {a.numel()} elements differ")


def diff_traces(path_a: str, path_b: str) -> Divergence:
    head_a, recs_a = read_trace(path_a)
    head_b, recs_b = read_trace(path_b)
    lines = [f"{name}: {path} ({_describe_run(head, recs)})"
             for name, path, head, recs in (("a", path_a, head_a, recs_a), ("b", path_b, head_b, recs_b))]
    n = min(len(recs_a), len(recs_b))
    first = next((i for i in range(n) if recs_a[i]["op"] != recs_b[i]["op"] or recs_a[i]["out"] != recs_b[i]["out"]),
                 None)
    if first is None:
        if len(recs_a) == len(recs_b):
            lines.append(f"identical: all {n} ops have the same outputs")
            return Divergence(0, "identical", n, "\n".join(lines))
        longer, rec = ("a", recs_a[n]) if len(recs_a) > n else ("b", recs_b[n])
        lines.append(f"the first {n} ops match; then only {longer} goes on, with #{n + 1} {_where(rec)}")
        return Divergence(n + 1, "length", n, "\n".join(lines))
    ra, rb = recs_a[first], recs_b[first]
    seq = first + 1
    if ra["op"] != rb["op"]:
        lines += [f"the op sequences differ at #{seq} (after {first} matching ops):",
                  f"  a: {_where(ra)}", f"  b: {_where(rb)}",
                  "the runs issue different ops from here on: their outputs are not compared"]
        return Divergence(seq, "op", first, "\n".join(lines))
    lines.append(f"first difference at #{seq} (after {first} matching ops): {_where(ra)}")
    if ra["site"] != rb["site"]:
        lines.append(f"  (b's call site: {rb['site']})")
    values_a, values_b = load_values(path_a).get(seq), load_values(path_b).get(seq)
    for index, (oa, ob) in enumerate(zip(ra["out"], rb["out"])):
        if oa == ob:
            continue
        shape = f"{oa.get('dtype', '')}{oa.get('shape', '')} {oa.get('device', '')}".strip()
        lines.append(f"  output {index} ({shape}):")
        lines.append(f"    a: {oa.get('digest', oa.get('value'))}")
        lines.append(f"    b: {ob.get('digest', ob.get('value'))}")
        if values_a is not None and values_b is not None:
            lines.append("    " + _value_difference(values_a["outputs"][index], values_b["outputs"][index]))
        elif values_a is not None or values_b is not None:
            lines.append("    values kept in one trace only (trace the other run with --reference and "
                         "--keep-values to compare values)")
    same_after = sum(1 for i in range(first + 1, n) if recs_a[i]["op"] == recs_b[i]["op"]
                     and recs_a[i]["out"] == recs_b[i]["out"])
    differ_after = sum(1 for i in range(first + 1, n) if recs_a[i]["op"] == recs_b[i]["op"]
                       and recs_a[i]["out"] != recs_b[i]["out"])
    lines.append(f"summary: {first} ops matched before #{seq}; after it, {differ_after} of the next "
                 f"{n - seq} ops differ and {same_after} match")
    return Divergence(seq, "output", first, "\n".join(lines))


def _resolve(name: str):
    namespace, op, overload = name.split(".")
    return getattr(getattr(getattr(torch.ops, namespace), op), overload)


def replay(path: str, seq: int) -> str:
    """Rerun the op recorded as ``seq`` from its kept inputs, natively and under repmode."""
    _, records = read_trace(path)  # first: a missing trace is "no such file", not "no values kept"
    if not 1 <= seq <= len(records):
        raise KeyError(f"{path} has no op #{seq} (it records ops #1 to #{len(records)})")
    kept = load_values(path)
    if seq not in kept:
        have = ", ".join(str(k) for k in sorted(kept)) or "none"
        raise KeyError(f"{values_path(path)} keeps no values for op #{seq} (kept: {have}); trace with "
                       "--reference OTHER --keep-values N to keep the inputs of differing ops")
    entry = kept[seq]
    func = _resolve(entry["op"])
    recorded = [o.get("digest") for o in records[seq - 1]["out"]]

    def fresh(x):
        if isinstance(x, torch.Tensor):
            return x.clone()
        return x.restore() if isinstance(x, SAFE_GLOBALS) else x

    def run(under_repmode: bool):
        args, kwargs = torch.utils._pytree.tree_map(fresh, (entry["args"], entry["kwargs"]),
                                                    is_leaf=lambda x: isinstance(x, SAFE_GLOBALS))
        saved = torch.get_rng_state()
        if entry.get("rng"):  # a random op: torch's CPU state as it was when it ran (repmode's since numerics 2)
            torch.set_rng_state(entry["rng"]["torch"])
        try:
            if under_repmode:
                with enabled():
                    out = func(*args, **kwargs)
            else:
                out = func(*args, **kwargs)
        finally:
            torch.set_rng_state(saved)
        outs = out if isinstance(out, (list, tuple)) else [out]
        return [digest_of(o) if isinstance(o, torch.Tensor) else None for o in outs]

    native, rep = run(False), run(True)
    lines = [f"op #{seq}: {entry['op']}"]
    for index, digest in enumerate(recorded):
        if digest is None:  # not a tensor (an absent gradient, a number)
            continue
        lines.append(f"  output {index}: recorded {digest}")
        lines.append(f"            native   {native[index]}" + ("  (= recorded)" if native[index] == digest else ""))
        lines.append(f"            repmode  {rep[index]}" + ("  (= recorded)" if rep[index] == digest else ""))
    return "\n".join(lines)
