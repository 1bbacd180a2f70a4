#!/usr/bin/env python3
"""Generate ggml_cy/core/csrc/quant_tables.h: the constant tables of ggml's quantized types
(i-quant grids, sign tables, the non-linear value tables of IQ4_NL and MXFP4/NVFP4).

The tables are data (facts of the file format), read from ggml's published source
(src/ggml-common.h, its GGML_TABLE_BEGIN(type, name, size) ... GGML_TABLE_END() blocks) and
cross-checked against the grids gguf-py publishes (gguf.quants: grid_hex/grid_map, ksigns,
kvalues) when the gguf package is installed.

    python tools/gen_quant_tables.py [path/to/ggml-common.h] [-o OUT]

Without a path the script reads ggml-common.h from a local ggml mirror (the GGML_COMMON_H
environment variable, or `git --git-dir=$GGML_GIT show HEAD:src/ggml-common.h`).
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "ggml_cy", "core", "csrc", "quant_tables.h")
DEFAULT_GIT = "/work/.mirror/ggml-org+ggml/repo"

TABLE_RE = re.compile(r"GGML_TABLE_BEGIN\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*\)(.*?)GGML_TABLE_END\(\)",
                      re.S)
CTYPES = {"uint8_t": (8, False), "int8_t": (8, True), "uint16_t": (16, False),
          "uint32_t": (32, False), "uint64_t": (64, False)}
SIZES = {"NGRID_IQ1S": 2048}


def read_source(path):
    if path:
        with open(path) as f:
            return f.read(), path
    if os.environ.get("GGML_COMMON_H"):
        return read_source(os.environ["GGML_COMMON_H"])
    git = os.environ.get("GGML_GIT", DEFAULT_GIT)
    text = subprocess.run(["git", "--git-dir", git, "show", "HEAD:src/ggml-common.h"],
                          check=True, capture_output=True, text=True).stdout
    rev = subprocess.run(["git", "--git-dir", git, "rev-parse", "HEAD"], check=True,
                         capture_output=True, text=True).stdout.strip()
    return text, f"ggml-org/ggml@{rev[:12]} src/ggml-common.h"


def parse(text):
    tables = {}
    text = re.sub(r"#define GGML_TABLE_BEGIN[^\n]*", "", text)   # the macro definitions
    for ctype, name, size, body in TABLE_RE.findall(text):
        if ctype not in CTYPES:
            raise SystemExit(f"unexpected table type {ctype} for {name}")
        n = int(SIZES.get(size, size))
        body = re.sub(r"//[^\n]*", "", body)
        vals = [int(v, 0) for v in re.findall(r"-?(?:0x[0-9a-fA-F]+|\d+)", body)]
        if len(vals) != n:
            raise SystemExit(f"{name}: {len(vals)} values, expected {n}")
        bits, signed = CTYPES[ctype]
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        if not all(lo <= v <= hi for v in vals):
            raise SystemExit(f"{name}: value out of range for {ctype}")
        tables[name] = (ctype, vals)
    return tables


def cross_check(tables):
    """Compare with gguf-py's published tables; returns the names checked."""
    try:
        import numpy as np
        from gguf import quants
    except ImportError:
        return []
    checked = []

    def grid_bytes(name, ctype):
        _, vals = tables[name]
        width = {"uint64_t": 8, "uint32_t": 4}[ctype]
        out = []
        for v in vals:
            out.append([(v >> (8 * i)) & 0xFF for i in range(width)])
        return np.array(out, dtype=np.uint8)

    for cls, name, ctype, signed in [
            (quants.IQ2_XXS, "iq2xxs_grid", "uint64_t", False),
            (quants.IQ2_XS, "iq2xs_grid", "uint64_t", False),
            (quants.IQ2_S, "iq2s_grid", "uint64_t", False),
            (quants.IQ3_XXS, "iq3xxs_grid", "uint32_t", False),
            (quants.IQ3_S, "iq3s_grid", "uint32_t", False),
            (quants.IQ1_S, "iq1s_grid", "uint64_t", True)]:
        cls.init_grid()
        ref = np.asarray(cls.grid).reshape(cls.grid_shape)
        mine = grid_bytes(name, ctype)
        if signed:
            mine = mine.view(np.int8)
        if not np.array_equal(mine.astype(np.float32), ref):
            raise SystemExit(f"{name} differs from gguf-py's {cls.__name__} grid")
        checked.append(name)
    if bytes(tables["ksigns_iq2xs"][1]) != quants.IQ2_XXS.ksigns:
        raise SystemExit("ksigns_iq2xs differs from gguf-py")
    checked.append("ksigns_iq2xs")
    if tuple(tables["kvalues_iq4nl"][1]) != tuple(quants.IQ4_NL.kvalues):
        raise SystemExit("kvalues_iq4nl differs from gguf-py")
    checked.append("kvalues_iq4nl")
    if tuple(tables["kvalues_fp4"][1]) != tuple(quants.MXFP4.kvalues):
        raise SystemExit("kvalues_fp4 differs from gguf-py")
    checked.append("kvalues_fp4")
    return checked


def fmt(ctype, vals):
    bits = CTYPES[ctype][0]
    if ctype == "int8_t":
        items, per = [str(v) for v in vals], 16
    elif bits == 64:
        items, per = [f"0x{v:016x}" for v in vals], 4
    elif bits == 32:
        items, per = [f"0x{v:08x}" for v in vals], 8
    else:
        items, per = [str(v) for v in vals], 16
    lines = []
    for i in range(0, len(items), per):
        lines.append("    " + ", ".join(items[i:i + per]) + ",")
    suffix = {"uint64_t": "ULL"}.get(ctype, "")
    if suffix:
        lines = [re.sub(r"(0x[0-9a-f]+)", r"\1" + suffix, ln) for ln in lines]
    return "\n".join(lines)


def render(tables, source, checked):
    out = [
        "/* Generated by tools/gen_quant_tables.py: do not edit.",
        f" * Source: {source} (the GGML_TABLE_BEGIN blocks).",
        " * Cross-checked against gguf-py: " + (", ".join(checked) if checked else "(gguf not installed)") + ".",
        " *",
        " * The constant tables of ggml's quantized types. Each table is a plain array declared",
        " * with GGML_CY_QTABLE_QUAL in front (default `static const`): CUDA code defines it",
        " * before including this header, e.g.",
        " *     #define GGML_CY_QTABLE_QUAL static const __device__   (or __constant__)",
        " * to place the tables in device memory. Names are ggml's. */",
        "#ifndef GGML_CY_QUANT_TABLES_H",
        "#define GGML_CY_QUANT_TABLES_H",
        "",
        "#include <stdint.h>",
        "",
        "#ifndef GGML_CY_QTABLE_QUAL",
        "#define GGML_CY_QTABLE_QUAL static const",
        "#endif",
        "",
        "#define NGRID_IQ1S 2048",
        "#define IQ1S_DELTA 0.125f",
        "#define IQ1M_DELTA 0.125f",
        "",
    ]
    for name, (ctype, vals) in tables.items():
        size = "NGRID_IQ1S" if len(vals) == 2048 else str(len(vals))
        out.append(f"GGML_CY_QTABLE_QUAL {ctype} {name}[{size}] = {{")
        out.append(fmt(ctype, vals))
        out.append("};")
        out.append("")
    out.append("#define kvalues_mxfp4 kvalues_fp4   /* MXFP4 and NVFP4: E2M1 values, doubled */")
    out.append("")
    out.append("#endif")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("source", nargs="?", help="path of ggml's src/ggml-common.h")
    ap.add_argument("-o", "--out", default=OUT)
    args = ap.parse_args(argv)
    text, source = read_source(args.source)
    tables = parse(text)
    for need in ["kmask_iq2xs", "ksigns_iq2xs", "ksigns64", "iq2xxs_grid", "iq2xs_grid",
                 "iq2s_grid", "iq3xxs_grid", "iq3s_grid", "kvalues_iq4nl", "kvalues_fp4",
                 "iq1s_grid"]:
        if need not in tables:
            raise SystemExit(f"table {need} not found in {source}")
    checked = cross_check(tables)
    with open(args.out, "w") as f:
        f.write(render(tables, source, checked))
    print(f"wrote {os.path.normpath(args.out)}: {len(tables)} tables; checked vs gguf-py: "
          f"{', '.join(checked) or 'none'}", file=sys.stderr)


if __name__ == "__main__":
    main()
