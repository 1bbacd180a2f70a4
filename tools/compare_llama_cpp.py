#!/usr/bin/env python3
"""Compare ggml_cy.models.llama's logits with llama.cpp's on the same GGUF files.

For each weight type (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K) it writes a tiny random
llama model with gguf-py (tests/_llama_ref.py: the same files the unit tests use, with a
minimal SentencePiece-style vocabulary so that llama.cpp accepts them), evaluates one
prompt with ggml_cy and with llama.cpp through the ``llama-cpp-python`` package, and
prints per type: whether the top-1 token agrees at every position, the normalized mean
squared error (test-backend-ops' NMSE, sum((a-b)^2)/sum(b^2)) between the two, and each
one's NMSE against the float64 reference on the file's (dequantized) weights.

    pip install llama-cpp-python        # builds llama.cpp from source (several minutes)
    python tools/compare_llama_cpp.py [--types q8_0,q4_k] [--threads 2] [--tokens 24]
                                      [--json out.json]

Both sides use an f16 KV cache (llama.cpp's default) and all prompt positions' logits;
llama.cpp runs with llama-cpp-python's defaults otherwise (no flash attention).
A type passes when the NMSE between the two is below --max-nmse (default 1e-3) and the
top-1 token is identical at every *decided* position: one where the float64 reference's
top-2 gap exceeds 3x the RMS difference between the two implementations' logits there
(random weights give near-ties, where either side's rounding picks the token); the raw
count of identical top-1 tokens and the reference's gaps where they differ are printed
too. Exit status 0 when every type passes, 1 otherwise, 2 when llama-cpp-python is
missing.
"""
import argparse
import json
import os
import pathlib
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def llama_cpp_logits(path, tokens, n_threads):
    """llama.cpp's logits for every position of tokens (n_tokens, n_vocab)."""
    import llama_cpp
    llm = llama_cpp.Llama(model_path=str(path), n_ctx=max(64, len(tokens)),
                          n_batch=max(64, len(tokens)), n_threads=n_threads,
                          n_threads_batch=n_threads, logits_all=True, verbose=False,
                          seed=0)
    llm.reset()
    llm.eval(list(tokens))
    out = np.array(llm.scores[:len(tokens)], dtype=np.float64)
    llm.close() if hasattr(llm, "close") else None
    return out, getattr(llama_cpp, "__version__", "?")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--types", default="f32,f16,bf16,q8_0,q4_0,q4_k,q6_k")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=24, help="prompt length (random ids)")
    ap.add_argument("--max-nmse", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None, help="also write the results here")
    a = ap.parse_args(argv)
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        print("llama-cpp-python is not installed: pip install llama-cpp-python",
              file=sys.stderr)
        return 2
    import _llama_ref as R
    from ggml_cy.models.llama import LlamaModel

    hp = R.HParams(n_ctx=256)
    rng = np.random.default_rng(a.seed)
    tokens = [1] + [int(t) for t in rng.integers(3, hp.n_vocab, a.tokens - 1)]
    rows, ok = [], True
    with tempfile.TemporaryDirectory() as tmp:
        for wt in [t.strip().upper() for t in a.types.split(",") if t.strip()]:
            if wt not in R.WEIGHT_TYPES:
                ap.error(f"unknown type {wt}; choose from {', '.join(R.WEIGHT_TYPES)}")
            path = os.path.join(tmp, f"tiny-{wt}.gguf")
            weights = R.write_model(path, hp, wt, seed=a.seed)
            ref = R.RefLlama(weights, hp).eval(tokens)
            ours = LlamaModel(path, n_threads=a.threads).eval(tokens).astype(np.float64)
            theirs, version = llama_cpp_logits(path, tokens, a.threads)
            agree = ours.argmax(1) == theirs.argmax(1)
            # a position is decided when the float64 reference's top-2 gap exceeds 3x the
            # RMS difference between the two implementations' logits there (else the two
            # are within each other's rounding of a tie)
            top2 = np.sort(ref, axis=1)[:, -2:]
            gap = top2[:, 1] - top2[:, 0]
            noise = np.sqrt(np.mean((ours - theirs) ** 2, axis=1))
            decided = gap > 3 * noise
            row = {"type": wt, "positions": len(tokens),
                   "top1_agree": int(agree.sum()),
                   "top1_identical": bool(agree.all()),
                   "decided_positions": int(decided.sum()),
                   "top1_identical_where_decided": bool(agree[decided].all()),
                   "ref_gaps_where_top1_differs": [round(float(g), 4) for g in gap[~agree]],
                   "top1_agree_with_f64": [int((ours.argmax(1) == ref.argmax(1)).sum()),
                                           int((theirs.argmax(1) == ref.argmax(1)).sum())],
                   "nmse_vs_llama_cpp": R.nmse(ours, theirs),
                   "nmse_first_position": R.nmse(ours[:1], theirs[:1]),
                   "nmse_ggml_cy_vs_f64": R.nmse(ours, ref),
                   "nmse_llama_cpp_vs_f64": R.nmse(theirs, ref),
                   "llama_cpp_python": version}
            row["pass"] = (row["top1_identical_where_decided"]
                           and row["nmse_vs_llama_cpp"] < a.max_nmse)
            ok &= row["pass"]
            rows.append(row)
            print(f"{wt:5s} top-1 {row['top1_agree']}/{len(tokens)} (all {row['decided_positions']}"
                  f" decided: {'yes' if row['top1_identical_where_decided'] else 'NO'}; gaps "
                  f"where they differ {row['ref_gaps_where_top1_differs']})  NMSE vs llama.cpp "
                  f"{row['nmse_vs_llama_cpp']:.2e} (first position "
                  f"{row['nmse_first_position']:.1e})  vs float64: ggml_cy "
                  f"{row['nmse_ggml_cy_vs_f64']:.2e}, llama.cpp "
                  f"{row['nmse_llama_cpp_vs_f64']:.2e}  {'PASS' if row['pass'] else 'FAIL'}",
                  flush=True)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
