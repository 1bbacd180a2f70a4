"""``ggml-cy quantize IN.gguf OUT.gguf TYPE [--threads N]``: llama-quantize's basic job.

Which tensors change (llama-quantize's rule for a pure TYPE): those whose name ends in
"weight", with two or more dimensions, stored as F32, F16 or BF16, whose row length (ne0) is
a multiple of TYPE's block size. Everything else is copied byte for byte: 1-D tensors (norms,
biases), integer tensors, tensors that are already quantized, and matrices whose rows do not
split into whole blocks (a 100-wide matrix cannot be Q4_0; llama-quantize falls back to
another type there, this tool keeps the tensor as it is and says so). The metadata is copied
with its types; ``general.file_type`` and ``general.quantization_version`` are set as
llama-quantize sets them.

Memory stays bounded: the input is memory-mapped, tensors are converted one at a time in
chunks of rows (about 8 MiB of float32 each) into that tensor's output bytes, and the output
is written by ggml_cy.gguf's streaming writer -- the peak is about one quantized tensor
plus one chunk. Progress (tensors done, MB/s of input) goes to stderr -- a bar redrawn in
place on a terminal, one line per tensor otherwise -- and the sizes before and after to
stdout.
"""
import os
import sys
import time

import numpy as np

CHUNK_BYTES = 8 << 20
QUANTIZATION_VERSION = 2            # ggml's GGML_QNT_VERSION
# TYPE -> llama.cpp's llama_ftype for a file whose weights are all of that type
FILE_TYPE = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q8_0": 7, "q5_0": 8, "q5_1": 9,
             "q2_K": 10, "q3_K": 11, "q4_K": 14, "q5_K": 16, "q6_K": 18, "bf16": 32,
             "tq1_0": 36, "tq2_0": 37, "mxfp4": 38}
SOURCE_TYPES = (0, 1, 30)           # F32, F16, BF16


def add_parser(sub):
    p = sub.add_parser("quantize", help="convert a GGUF model's weight matrices to a "
                                        "quantized type (as llama-quantize)")
    p.add_argument("input", help="GGUF file to read")
    p.add_argument("output", help="GGUF file to write")
    p.add_argument("type", help="target type: " + ", ".join(FILE_TYPE))
    p.add_argument("--threads", type=int, default=None, help="threads (default: all)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    return p


class QuantizeError(ValueError):
    """A reason the file cannot be converted (printed by the CLI)."""


def _target(type_arg):
    from ggml_cy.quants.quantize import resolve_type, _traits
    try:
        num = resolve_type(type_arg)
    except (TypeError, ValueError) as e:
        raise QuantizeError(f"{e}; choose one of: {', '.join(FILE_TYPE)}") from None
    name = _traits(num)[0]
    if name not in FILE_TYPE:
        raise QuantizeError(f"cannot quantize a model to {name}; choose one of: "
                            f"{', '.join(FILE_TYPE)}")
    return num, name


def plan(f, target):
    """[(TensorInfo, new type number or None to copy, reason)] for every tensor of f."""
    from ggml_cy.quants.quantize import _traits
    tname, blck, _ = _traits(target)
    out = []
    for ti in f.tensors.values():
        t = int(ti.type)
        if not ti.name.endswith("weight"):
            out.append((ti, None, "not a weight"))
        elif len(ti.ne) < 2:
            out.append((ti, None, "1-D"))
        elif t not in SOURCE_TYPES:
            out.append((ti, None, f"stored as {ti.type_name}"))
        elif ti.ne[0] % blck:
            out.append((ti, None, f"row length {ti.ne[0]} not a multiple of {blck}"))
        elif t == target:
            out.append((ti, None, f"already {tname}"))
        else:
            out.append((ti, target, ""))
    return out


def _float_rows(f, ti):
    """The tensor as a 2-D (rows, ne0) array of its stored float type (zero-copy)."""
    raw = f.raw(ti.name)
    dt = {0: np.float32, 1: np.float16, 30: np.uint16}[int(ti.type)]
    return raw.view(dt).reshape(-1, ti.ne[0])


def _convert(f, ti, target, n_threads):
    """The tensor's bytes in the target type, converted in chunks of rows."""
    from ggml_cy.core._core import bfloat16_to_float32
    from ggml_cy.quants.quantize import quantize, _traits
    _, blck, tsize = _traits(target)
    src = _float_rows(f, ti)
    nrows, ne0 = src.shape
    row_bytes = ne0 // blck * tsize
    out = np.empty((nrows, row_bytes), np.uint8)
    step = max(1, CHUNK_BYTES // (4 * ne0))
    for r0 in range(0, nrows, step):
        part = src[r0:r0 + step]
        if int(ti.type) == 30:
            part = bfloat16_to_float32(part)
        quantize(part, target, out=out[r0:r0 + step], n_threads=n_threads)
    return out


def _metadata(f, target_name, quantizing):
    """(key, Value) pairs for the output file: the input's, with file_type updated."""
    from ggml_cy.gguf.constants import GGUFValueType
    from ggml_cy.gguf.writer import Value
    md = f.metadata
    items = [(k, Value(md[k], md.spec(k))) for k in md]
    if quantizing:
        items = [(k, v) for k, v in items
                 if k not in ("general.file_type", "general.quantization_version")]
        items.append(("general.quantization_version",
                      Value(QUANTIZATION_VERSION, GGUFValueType.UINT32)))
        items.append(("general.file_type", Value(FILE_TYPE[target_name], GGUFValueType.UINT32)))
    return items


def quantize_file(src_path, dst_path, type, n_threads=None, progress=None):
    """Converts src_path to dst_path (see the module doc). ``progress(done, total, ti,
    new_type_name, in_bytes_so_far, seconds)`` is called after each tensor. Returns a dict:
    in_bytes, out_bytes (file sizes), quantized / kept (tensor names), seconds."""
    from ggml_cy import gguf as G
    from ggml_cy.cpu.threads import check_num_threads, get_num_threads
    from ggml_cy.quants.quantize import _traits
    target, tname = _target(type)
    nth = get_num_threads() if n_threads is None else check_num_threads(n_threads, "--threads")
    if not os.path.exists(src_path):
        raise QuantizeError(f"{src_path}: no such file")
    if os.path.exists(dst_path) and os.path.samefile(src_path, dst_path):
        raise QuantizeError("the output file must not be the input file")
    t0 = time.perf_counter()
    with G.load(src_path) as f:
        if f.byteorder != "little":
            raise QuantizeError(f"{src_path}: big-endian GGUF files are not supported")
        steps = plan(f, target)
        quantizing = any(new is not None for _, new, _ in steps)
        with G.GGUFWriter(dst_path) as w:
            for k, v in _metadata(f, tname, quantizing):
                w.add_metadata(k, v)                # general.alignment included
            for ti, new, _ in steps:
                w.add_tensor_info(ti.name, int(ti.type) if new is None else new, ti.shape)
            w.write_header()
            done_bytes = 0
            for i, (ti, new, _) in enumerate(steps):
                if new is None:
                    w.write_tensor(ti.name, f.raw(ti.name))
                else:
                    w.write_tensor(ti.name, _convert(f, ti, new, nth))
                done_bytes += ti.nbytes
                if progress is not None:
                    progress(i + 1, len(steps), ti, tname if new is not None else None,
                             done_bytes, time.perf_counter() - t0)
    return {"in_bytes": os.path.getsize(src_path), "out_bytes": os.path.getsize(dst_path),
            "quantized": [ti.name for ti, new, _ in steps if new is not None],
            "kept": [(ti.name, why) for ti, new, why in steps if new is None],
            "seconds": time.perf_counter() - t0, "type": tname,
            "block": _traits(target)[1]}


def _mib(n):
    return f"{n / 2**20:.2f} MiB"


def run(args, out=None, err=None):
    out = out or sys.stdout
    err = err or sys.stderr
    from ggml_cy.gguf.constants import GGUFError

    tty = hasattr(err, "isatty") and err.isatty()

    def progress(done, total, ti, new, nbytes, secs):
        if args.quiet:
            return
        rate = nbytes / max(secs, 1e-9) / 1e6
        if tty:     # one bar, redrawn in place
            n = 30 * done // total
            print(f"\r[{'#' * n}{'.' * (30 - n)}] {done}/{total} tensors  {rate:8.1f} MB/s  "
                  f"{ti.name[:40]:40s}", end="" if done < total else "\n", file=err, flush=True)
            return
        what = f"{ti.type_name} -> {new}" if new else f"{ti.type_name} (kept)"
        print(f"[{done:{len(str(total))}d}/{total}] {ti.name:40s} {what:16s} "
              f"{str(list(ti.shape)):>16s}  {rate:8.1f} MB/s", file=err, flush=True)

    try:
        st = quantize_file(args.input, args.output, args.type, args.threads, progress)
    except (QuantizeError, GGUFError, OSError) as e:
        print(f"ggml-cy quantize: {e}", file=err)
        return 1
    except (TypeError, ValueError) as e:
        print(f"ggml-cy quantize: {e}", file=err)
        return 1
    print(f"quantized {len(st['quantized'])} tensors to {st['type']}, kept "
          f"{len(st['kept'])} as they were, in {st['seconds']:.2f} s", file=out)
    odd = [n for n, why in st["kept"] if why.startswith("row length")]
    if odd:
        print(f"kept (rows not a multiple of {st['block']}): {', '.join(odd)}", file=out)
    print(f"size: {_mib(st['in_bytes'])} -> {_mib(st['out_bytes'])} "
          f"({st['out_bytes'] / max(st['in_bytes'], 1):.1%})", file=out)
    return 0
