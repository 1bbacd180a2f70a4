"""EXPERIMENT (branch qgpu4): time the Q4_0 4096x4096 x1 mat-vec kernel variants that
GGML_CY_Q4MMV selects (cuda/quant.cu) with bench/gpu.py's own method and case, in one
process, next to torch's float16 mat-vec and the d2d copy ceiling of the same run; plus the
same shape with the weights L2-resident (one weight set, no rotation) to split the time into
the memory part and the fixed part.

    python3 tools/q4mmv_variants.py [variant ...]     # default: all; prints one line each
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from bench import _harness, gpu  # noqa: E402
from bench import _libs  # noqa: E402

VARIANTS = ["0", "u2", "sf4", "sf8", "sf16", "s84", "s88", "s816"]


def main(argv):
    variants = argv or VARIANTS
    gc, _ = _libs.load_ggml_cy()
    torch = _libs.load_optional("torch")
    import ggml_cy.cuda as gcuda
    info = gcuda.device_info()
    opts = _harness.Options.make(1)
    env = {"gc": gc, "gcuda": gcuda, "torch": torch, "opts": opts, "l2": info["l2_cache_bytes"]}
    timer = gpu.EventTimer(torch, gcuda)
    out = {"device": info["name"]}
    ceil = gpu.measure_events(gpu._ceiling_case(env), opts, timer)
    out["copy_GBps"] = ceil.gbps("ggml_cy")
    print(f"device {info['name']}: d2d copy {out['copy_GBps']:.0f} GB/s", flush=True)
    for v in variants:
        os.environ["GGML_CY_Q4MMV"] = v
        row = {}
        for label, l2 in (("hbm", info["l2_cache_bytes"]), ("l2", 1)):
            env["l2"] = l2                        # 1 byte of "L2": one set, no rotation
            case = gpu._matvec_case(env, "Q4_0", 1, [])
            res = gpu.measure_events(case, opts, timer)
            if res.errors or res.skipped:
                row[label] = {"errors": res.errors, "skipped": res.skipped}
                continue
            row[label] = {"us": res.time("ggml_cy") * 1e6, "torch_us": res.time("torch") * 1e6,
                          "notes": res.notes}
        env["l2"] = info["l2_cache_bytes"]
        out[v] = row
        h, c = row.get("hbm", {}), row.get("l2", {})
        if "us" in h:
            print(f"{v:5s} hbm {h['us']:6.2f} us (torch f16 {h['torch_us']:6.2f}, x{h['torch_us'] / h['us']:.2f},"
                  f" {9.437184e6 / h['us'] / 1e3:.0f} GB/s = {9.437184e6 / h['us'] / 1e3 / out['copy_GBps']:.2f}"
                  f" of copy) | L2-resident {c.get('us', float('nan')):6.2f} us | "
                  f"{[n for n in h['notes'] if 'NMSE' in n]}", flush=True)
        else:
            print(v, row, flush=True)
    path = os.path.join(os.environ.get("OUT", "."), "q4mmv_variants.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, default=str)


if __name__ == "__main__":
    main(sys.argv[1:])
