"""Developer tool (device rounds, issue 12): issue 12's GPU rows (dequantize of the five bench
types, the Q4_0 4096x4096 x1 mat-vec) with programmatic dependent launch on and off, in one
process, next to the d2d copy ceiling of the same run. Each case is measured with bench/gpu.py's
own method (CUDA events around back-to-back launches on rotating buffers), in alternating
rounds, and every sample is kept.

    python3 tools/device/pdl_ab.py [rounds]      # default 2; JSON to $OUT/pdl_ab.json
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from bench import _harness, _libs, gpu  # noqa: E402


def mixed_case(env):
    """The Q4_0 x1 mat-vec behind a kernel without PDL each time (a float32 -> float16 copy of
    4096 values, as a model's norm or cast would be): the time of the pair."""
    import numpy as np
    gc, gcuda = env["gc"], env["gcuda"]
    M = K = 4096

    def setup():
        t = gc.GGMLType["Q4_0"]
        q_bytes = M * K // t.blck_size * t.type_size
        k = gpu._rotation(q_bytes, env["l2"], False)
        ws = [gcuda.from_blocks(gpu._quant_blocks(gc, "Q4_0", M, K, 100 + i), "Q4_0") for i in range(k)]
        x = gcuda.asarray(np.random.default_rng(5).standard_normal((1, K)).astype(np.float32))
        h = gcuda.empty((1, K), np.float16)
        outs = [gcuda.empty((1, M), np.float32) for _ in range(k)]

        def pair(i):
            gcuda.copyto(h, x)
            return gcuda.mul_mat(ws[i % k], x, out=outs[i % k])
        return _harness.Setup({}, nbytes=q_bytes, reference=None, notes=[]), {"ggml_cy": pair}

    return _harness.Case("Q4_0 x1 mat-vec after a f32->f16 copy (pair)", setup, group="quant")


def main(argv):
    rounds = int(argv[0]) if argv else 2
    gc, _ = _libs.load_ggml_cy()
    torch = _libs.load_optional("torch")
    import ggml_cy.cuda as gcuda
    from ggml_cy.cuda import _cuda
    info = gcuda.device_info()
    opts = _harness.Options.make(1)
    env = {"gc": gc, "gcuda": gcuda, "torch": torch, "opts": opts, "l2": info["l2_cache_bytes"]}
    timer = gpu.EventTimer(torch, gcuda)
    deq = [c for c in gpu.quant_cases(env) if c.name.startswith("dequantize")]
    mv = [c for c in gpu.quant_cases(env) if c.name.startswith("mul_mat Q4_0 4096x4096 x1 ")]
    mixed = mixed_case(env)
    # (pdl, mat-vec prefetch): the dequantize rows only need PDL on/off
    modes = [(1, 1), (1, 0), (0, 0)]
    out = {"device": info["name"], "copy_GBps": [], "rows": {}}
    for r in range(rounds):
        ceil = gpu.measure_events(gpu._ceiling_case(env), opts, timer)
        out["copy_GBps"].append(ceil.gbps("ggml_cy"))
        for pdl, pf in (modes if r % 2 == 0 else modes[::-1]):
            _cuda._set_pdl(pdl)
            _cuda._set_mv_prefetch(pf)
            for case in (deq if pf == 0 else []) + mv + [mixed]:
                res = gpu.measure_events(case, opts, timer)
                key = f"{case.name} | pdl={pdl}" + (f" pf={pf}" if case in mv or case is mixed else "")
                row = out["rows"].setdefault(key, {"us": [], "torch_us": []})
                if res.errors or res.skipped or res.mismatches:
                    row.setdefault("problems", []).append([res.errors, res.skipped, res.mismatches])
                    continue
                row["us"].append(res.time("ggml_cy") * 1e6)
                row["nbytes"] = res.nbytes
                if "torch" in res.timings:
                    row["torch_us"].append(res.time("torch") * 1e6)
    _cuda._set_pdl(True)
    _cuda._set_mv_prefetch(True)
    copy = statistics.median(out["copy_GBps"])
    print(f"device {info['name']}: d2d copy {copy:.0f} GB/s (rounds: "
          f"{', '.join(f'{g:.0f}' for g in out['copy_GBps'])})")
    for name, row in out["rows"].items():
        if not row["us"]:
            print(f"{name}: {row.get('problems')}")
            continue
        us = statistics.median(row["us"])
        line = f"{name:60s} {us:7.2f} us ({', '.join(f'{u:.2f}' for u in row['us'])})"
        if row["torch_us"]:
            t = statistics.median(row["torch_us"])
            line += f"  torch {t:.2f} us  x{t / us:.3f}"
        else:
            line += f"  of copy {row['nbytes'] / us / 1e3 / copy:.3f}"
        print(line, flush=True)
    with open(os.path.join(os.environ.get("OUT", "."), "pdl_ab.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
