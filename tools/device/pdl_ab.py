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
    cases = [c for c in gpu.quant_cases(env) if c.name.startswith("dequantize")
             or c.name.startswith("mul_mat Q4_0 4096x4096 x1 ")]
    out = {"device": info["name"], "copy_GBps": [], "rows": {}}
    for r in range(rounds):
        ceil = gpu.measure_events(gpu._ceiling_case(env), opts, timer)
        out["copy_GBps"].append(ceil.gbps("ggml_cy"))
        for pdl in ((True, False) if r % 2 == 0 else (False, True)):
            _cuda._set_pdl(pdl)
            for case in cases:
                res = gpu.measure_events(case, opts, timer)
                row = out["rows"].setdefault(f"{case.name} | pdl={int(pdl)}", {"us": [], "torch_us": []})
                if res.errors or res.skipped or res.mismatches:
                    row.setdefault("problems", []).append([res.errors, res.skipped, res.mismatches])
                    continue
                row["us"].append(res.time("ggml_cy") * 1e6)
                row["nbytes"] = res.nbytes
                if "torch" in res.timings:
                    row["torch_us"].append(res.time("torch") * 1e6)
    _cuda._set_pdl(True)
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
