"""``ggml-cy gguf info FILE [--json] [--full]`` and ``ggml-cy gguf verify FILE``.

info prints the header, the metadata (long arrays abbreviated unless --full) and the
tensor table (name, type, ne in ggml order, offset from the data section, size), the way
gguf-py's gguf_dump does; --json prints the same as one JSON object. verify runs every
check of the reader (see README "GGUF files") and decodes every value: exit status 0 and
one summary line for a good file, 1 and the reason (field and byte offset) for a bad one.
"""
import json
import math
import sys

import numpy as np

ABBREV = 8      # array elements shown before "..."


def add_parser(sub):
    p = sub.add_parser("gguf", help="inspect and check GGUF model files (info, verify)")
    gsub = p.add_subparsers(dest="gguf_command", metavar="{info,verify}")
    info = gsub.add_parser("info", help="header, metadata and tensor table of a GGUF file")
    info.add_argument("file")
    info.add_argument("--json", action="store_true", help="one JSON object on stdout")
    info.add_argument("--full", action="store_true", help="print arrays in full")
    verify = gsub.add_parser("verify", help="check a GGUF file; exit 1 with the reason if "
                                            "it is malformed")
    verify.add_argument("file")
    p.set_defaults(_gguf_parser=p)
    return p


def _type_str(md, key):
    spec = md.spec(key)
    return _spec_str(spec)


def _spec_str(spec):
    if isinstance(spec, tuple):
        elem = spec[1]
        if isinstance(elem, list):
            return "array[mixed arrays]"
        return f"array[{_spec_str(elem)}]"
    return str(spec)


def _plain(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v


def _strict_json(v):
    """NaN and infinities as the strings 'nan', 'inf', '-inf' (strict JSON has no such
    numbers)."""
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, list):
        return [_strict_json(x) for x in v]
    return v


def _abbrev(v, full):
    """(value for printing, total length or None, truncated?)"""
    if isinstance(v, (list, np.ndarray)):
        n = len(v)
        if not full and n > ABBREV:
            return _plain(v[:ABBREV]), n, True
        return _plain(v), n, False
    return _plain(v), None, False


def _info(path, as_json, full, out):
    from ggml_cy.gguf import load
    with load(path) as f:
        md = f.metadata
        if as_json:
            doc = {"file": str(path), "version": f.version, "byteorder": f.byteorder,
                   "alignment": f.alignment, "data_offset": f.data_offset,
                   "file_size": f.size, "metadata": {}, "tensors": []}
            for k in md:
                v, n, cut = _abbrev(md[k], full)
                e = {"type": _type_str(md, k), "value": _strict_json(v)}
                if n is not None:
                    e["n"] = n
                if cut:
                    e["truncated"] = True
                doc["metadata"][k] = e
            for ti in f.tensors.values():
                doc["tensors"].append({"name": ti.name, "type": ti.type_name,
                                       "shape": list(ti.shape), "ne": list(ti.ne),
                                       "offset": ti.offset, "nbytes": ti.nbytes})
            json.dump(doc, out, ensure_ascii=False, allow_nan=False)
            out.write("\n")
            return 0
        w = out.write
        w(f"* File: {path}\n")
        w(f"* GGUF version {f.version}, {f.byteorder}-endian, alignment {f.alignment}, "
          f"data at byte {f.data_offset}, {f.size} bytes\n")
        w(f"* {len(md)} key/value pairs:\n")
        for i, k in enumerate(md, 1):
            v, n, cut = _abbrev(md[k], full)
            if isinstance(v, list):
                body = ", ".join(repr(x) for x in v) + (", ..." if cut else "")
                shown = f"[{body}]"
            else:
                shown = repr(v)
            if len(shown) > 200 and not full:
                shown = shown[:197] + "..."
            w(f"{i:6}: {_type_str(md, k):20} | {n if n is not None else 1:8} | {k} = "
              f"{shown}\n")
        w(f"* {len(f.tensors)} tensors:\n")
        name_w = max([len(n) for n in f.tensors] + [4])
        w(f"{'#':>6}  {'name':<{name_w}}  {'type':<8} {'ne':<28} {'offset':>12} "
          f"{'size':>12}\n")
        for i, ti in enumerate(f.tensors.values(), 1):
            ne = ", ".join(str(x) for x in ti.ne)
            w(f"{i:6}: {ti.name:<{name_w}}  {ti.type_name:<8} [{ne}]{'':<{26 - len(ne)}} "
              f"{ti.offset:>12} {ti.nbytes:>12}\n")
    return 0


def _verify(path, out):
    from ggml_cy.gguf import load
    with load(path) as f:
        for k in f.metadata:
            f.metadata[k]
        total = sum(ti.nbytes for ti in f.tensors.values())
        out.write(f"{path}: OK (GGUF v{f.version}, {f.byteorder}-endian, "
                  f"{len(f.metadata)} keys, {len(f.tensors)} tensors, {total} bytes of "
                  f"tensor data)\n")
    return 0


def run(args, out=None, err=None):
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    from ggml_cy.gguf import GGUFError
    cmd = getattr(args, "gguf_command", None)
    if cmd is None:
        args._gguf_parser.print_help(out)
        return 2
    try:
        if cmd == "info":
            return _info(args.file, args.json, args.full, out)
        return _verify(args.file, out)
    except GGUFError as e:
        err.write(f"{args.file}: invalid GGUF file: {e}\n")
        return 1
    except BrokenPipeError:
        return 1            # the reader of our output went away
    except OSError as e:
        err.write(f"{args.file}: {e.strerror or e}\n")
        return 1
