"""``repmode env``: what this environment is, and whether it computes repmode's canonical bits.

    python -m repmode env            # a report for people
    python -m repmode env --json     # the same, for machines

The report lists the versions (repmode, NUMERICS_VERSION, torch, Python), the CPU (model, the SIMD
flags repmode cares about, the ISA path in use and the ones available), threads, CUDA (torch's
build, the device and driver, repmode's CUDA extension), and a self-check: a small fixed battery
(random numbers, matrix products, sums, softmax and cross entropy, the math functions, a
convolution with its backward, normalizations, sorting, two optimizer steps of a small MLP) run
under ``repmode.enabled()``, each row's digest compared with the digest pinned in this package
for its NUMERICS_VERSION (``self_check_digests.py``). All equal: this machine computes repmode's
canonical bits. The battery saves and restores torch's random state and thread count.

Exit status: 0, or 1 when the self-check finds a difference (``--no-self-check`` skips it).
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import sys

import torch

# CPU flags that decide which of repmode's paths can run, or that torch's kernels use.
_FLAGS_OF_INTEREST = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq", "avx512bw", "avx512vl",
                      "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16")
_ISAS = ("scalar", "avx2", "avx512")


def _battery() -> dict[str, object]:
    """The self-check's rows: name -> a function returning the values to digest. Inputs come from
    repmode's own random stream (canonical by definition), so nothing depends on torch's kernels."""
    F = torch.nn.functional

    def random():
        return [torch.rand(1000), torch.randn(1000), torch.randint(0, 1000, (100,)), torch.randperm(50),
                F.dropout(torch.ones(256), 0.3)]

    def matmul():
        a, b = torch.randn(33, 70), torch.randn(70, 19)
        return [a @ b, torch.bmm(torch.randn(3, 8, 129), torch.randn(3, 129, 5)), torch.randn(17) @ torch.randn(17)]

    def long_k():
        # products over k past one chunk (256) and one group (16,384) of the order over k
        # (docs/semantics.md "Matrix products", NUMERICS_VERSION 3)
        return [torch.randn(3, 300) @ torch.randn(300, 2), torch.randn(2, 16_700) @ torch.randn(16_700, 3)]

    def sums():
        x = torch.randn(20_000) * 1e3
        m = torch.randn(37, 301)
        return [x.sum(), x.mean(), m.sum(1), m.var(0), m.cumsum(1), m.logsumexp(1), torch.linalg.vector_norm(m)]

    def softmax_ce():
        logits, target = torch.randn(16, 10), torch.randint(0, 10, (16,))
        return [logits.softmax(-1), logits.log_softmax(-1), F.cross_entropy(logits, target, label_smoothing=0.1)]

    def math():
        x = torch.randn(2048) * 4
        return [x.exp(), x.abs().log1p(), x.tanh(), x.erf(), x.sin(), x.sigmoid(), F.gelu(x), x.abs().pow(1.7),
                x.abs().sqrt(), (x.abs() + 1).rsqrt()]

    def conv():
        x = torch.randn(2, 3, 12, 12, requires_grad=True)
        w = torch.randn(5, 3, 3, 3, requires_grad=True)
        y = F.conv2d(x, w, padding=1, stride=2)
        y.square().sum().backward()
        return [y, x.grad, w.grad, F.max_pool2d(y, 2), F.avg_pool2d(y, 2)]

    def norms():
        x = torch.randn(8, 6, 5, 5)
        return [F.layer_norm(x, (5, 5)), F.batch_norm(x, None, None, training=True), F.group_norm(x, 3)]

    def sorting():
        x = torch.randn(5, 40).round()  # ties
        return [*torch.sort(x, stable=True), *torch.topk(x, 7), torch.median(x, 1).values]

    def training():
        model = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        x, y = torch.randn(32, 12), torch.randint(0, 3, (32,))
        for _ in range(2):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
        return model

    return {"random": random, "matmul": matmul, "sums": sums, "softmax_ce": softmax_ce, "math": math,
            "conv": conv, "norms": norms, "sorting": sorting, "training": training,
            "long_k": long_k}


def battery_digests() -> dict[str, str]:
    """``{row: digest}`` of the self-check battery on the CPU, each row seeded on its own."""
    import repmode

    out = {}
    with torch.random.fork_rng(devices=[]):
        for index, (name, fn) in enumerate(_battery().items()):
            with repmode.enabled(seed=1000 + index):
                out[name] = repmode.digest(fn())
    return out


def pinned_digests() -> dict[str, str] | None:
    """The digests pinned in this package for the running NUMERICS_VERSION (None: none pinned)."""
    from ..version import NUMERICS_VERSION
    from .self_check_digests import PINNED

    return PINNED.get(NUMERICS_VERSION)


def self_check() -> dict:
    """``{"agrees": True/False/None, "rows": [{"name", "digest", "pinned", "equal"}], ...}``;
    ``agrees`` is None when this package pins no digests for its NUMERICS_VERSION."""
    from ..version import NUMERICS_VERSION

    got, pinned = battery_digests(), pinned_digests()
    rows = [{"name": name, "digest": digest, "pinned": (pinned or {}).get(name),
             "equal": None if pinned is None else digest == pinned.get(name)} for name, digest in got.items()]
    agrees = None if pinned is None else (set(pinned) == set(got) and all(r["equal"] for r in rows))
    return {"agrees": agrees, "numerics_version": NUMERICS_VERSION, "threads": torch.get_num_threads(),
            "rows": rows}


def _cpu_model_and_flags() -> tuple[str, list[str]]:
    model, flags = platform.processor() or "unknown", []
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model in ("unknown", platform.processor()):
                    model = value.strip()
                elif key.strip() == "flags":
                    present = set(value.split())
                    flags = [flag for flag in _FLAGS_OF_INTEREST if flag in present]
                    break
    except OSError:  # not Linux: the model from platform, no flags
        pass
    return model, flags


def available_isas() -> list[str]:
    """The CPU ISA paths this CPU can run (tried one by one, the path in use restored)."""
    from .. import _ext

    current, found = _ext.cpu_isa(), []
    try:
        for name in _ISAS:
            if _ext.C.set_cpu_isa(name):
                found.append(name)
    finally:
        _ext.C.set_cpu_isa(current)
    return found


def _cuda() -> dict:
    from .. import _ext

    info = {"torch_build": torch.version.cuda, "available": torch.cuda.is_available(), "devices": [],
            "driver": None, "repmode_extension": _ext.CUDA is not None, "extension_error": _ext.CUDA_LOAD_ERROR}
    if info["available"]:
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            info["devices"].append({"index": i, "name": p.name, "capability": f"{p.major}.{p.minor}",
                                    "memory_gib": round(p.total_memory / 2**30, 1)})
        get_driver = getattr(torch._C, "_cuda_getDriverVersion", None)
        if get_driver is not None:
            version = int(get_driver())
            info["driver"] = f"{version // 1000}.{version % 1000 // 10}"
    return info


def collect(run_self_check: bool = True) -> dict:
    from .. import _ext
    from ..version import NUMERICS_VERSION, __version__

    model, flags = _cpu_model_and_flags()
    report = {
        "repmode": {"version": __version__, "numerics_version": NUMERICS_VERSION,
                    "location": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))},
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": {"model": model, "machine": platform.machine(), "flags": flags, "isa": _ext.cpu_isa(),
                "isa_available": available_isas(), "isa_env": os.environ.get("REPMODE_CPU_ISA") or None,
                "flush_denormal": _ext.flush_denormal_active()},
        "threads": {"torch": torch.get_num_threads(), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS")},
        "cuda": _cuda(),
    }
    report["self_check"] = self_check() if run_self_check else None
    return report


def verdict(check: dict | None) -> str:
    if check is None:
        return "not run"
    if check["agrees"] is None:
        return f"unknown (this package pins no digests for NUMERICS_VERSION {check['numerics_version']})"
    if check["agrees"]:
        return "yes"
    differing = [r["name"] for r in check["rows"] if not r["equal"]]
    return f"NO (differs: {', '.join(differing)})"


@functools.lru_cache(maxsize=1)
def header_line() -> str:
    """One line for a test report (the pytest plugin's header): versions, ISA path, threads and the
    self-check's verdict (run once per process)."""
    from .. import _ext
    from ..version import NUMERICS_VERSION, __version__

    return (f"repmode {__version__}, NUMERICS_VERSION {NUMERICS_VERSION}, torch {torch.__version__}, CPU ISA "
            f"{_ext.cpu_isa()} (available: {', '.join(available_isas())}), {torch.get_num_threads()} threads; "
            f"canonical bits: {verdict(self_check())}")


def as_text(r: dict) -> str:
    cpu, cuda = r["cpu"], r["cuda"]
    lines = [
        f"repmode           {r['repmode']['version']} ({r['repmode']['location']})",
        f"NUMERICS_VERSION  {r['repmode']['numerics_version']}",
        f"torch             {r['torch']}",
        f"Python            {r['python']} ({r['platform']})",
        f"CPU               {cpu['model']} ({cpu['machine']})",
        f"CPU flags         {' '.join(cpu['flags']) or 'none of interest found'}",
        f"CPU ISA path      {cpu['isa']} (available: {', '.join(cpu['isa_available'])}"
        + (f"; REPMODE_CPU_ISA={cpu['isa_env']}" if cpu["isa_env"] else "") + ")",
        f"denormals         {'FLUSHED: repmode refuses to run' if cpu['flush_denormal'] else 'kept'}",
        f"threads           {r['threads']['torch']} (OMP_NUM_THREADS={r['threads']['OMP_NUM_THREADS'] or 'unset'})",
        f"CUDA              torch build {cuda['torch_build'] or 'none (CPU-only torch)'}; "
        + (", ".join(f"device {d['index']}: {d['name']} (sm {d['capability']}, {d['memory_gib']} GiB)"
                     for d in cuda["devices"]) + f"; driver {cuda['driver'] or 'unknown'}"
           if cuda["available"] else "no device")
        + f"; repmode CUDA extension: {'built' if cuda['repmode_extension'] else 'not built'}"
        + (f" ({cuda['extension_error']})" if cuda["extension_error"] else ""),
    ]
    check = r["self_check"]
    if check is not None:
        lines.append(f"self-check        {len(check['rows'])} rows on the CPU at {check['threads']} thread(s):")
        for row in check["rows"]:
            state = {True: "ok", False: f"DIFFERS (pinned {row['pinned']})", None: "no pinned digest"}[row["equal"]]
            lines.append(f"  {row['name']:<12} {row['digest'][:16]}…  {state}")
    lines.append(f"this machine computes repmode's canonical bits: {verdict(check)}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="repmode env", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--no-self-check", action="store_true", help="leave out the self-check battery")
    parser.add_argument("--print-pins", action="store_true",
                        help="print this machine's battery digests as the PINNED entry for self_check_digests.py "
                             "(for a release that changes NUMERICS_VERSION)")
    args = parser.parse_args(argv)
    if args.print_pins:
        from ..version import NUMERICS_VERSION

        digests = battery_digests()
        rows = "".join(f"        {k!r}: {v!r},\n" for k, v in digests.items())
        print(f"    {NUMERICS_VERSION}: {{\n{rows}    }},")
        return 0
    report = collect(run_self_check=not args.no_self_check)
    print(json.dumps(report, indent=1) if args.json else as_text(report))
    check = report["self_check"]
    return 1 if check is not None and check["agrees"] is False else 0


if __name__ == "__main__":
    sys.exit(main())
