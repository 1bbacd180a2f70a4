"""Tables and polynomials of csrc/simd_math_pow32.h's AVX-512 float32 power (issue 14 item
2): x^y = 2^(y log2 x) in float lanes, log2 x carried as a float pair.

log2 x = k + log2 c + log2(1 + r): vgetmantps puts x's significand m in [0.75, 1.5) and its
bits 18..22 pick one of 32 intervals ([1, 1.5) in steps of 1/32, [0.75, 1) in steps of 1/64).
Each interval's 1/c has few enough bits that r = m/c - 1 comes out of one FMA exactly (checked
here for every float m of the interval), and the two intervals next to 1 take c = 1, so that a
base near 1 has log2 c = 0 (no cancellation). log2 c = Th + Tl, Th a multiple of 2^-16 (k + Th
is exact for |k| < 2^8); the table's Th of the intervals below 1 holds the 1 that vgetexpps's
exponent lacks there.
log2(1 + r) = r/ln2 + r^2 C2 + r^3 P(r), C2 = -1/(2 ln2); the first two terms are kept to
float-pair precision by the kernel, P (degree 4) is fitted for the absolute error of r^3 P
against log2(1 + r) (2^-38.4 of it with float coefficients: |t| <= 128 makes that 2^-31 in
t, a 100th of an ulp; degree 3 left 2^-36.3). The form's worst error, 0.576 ulp, comes from
the r^3 term's float roundings (2^-24 of a term 2^-11.6 of log2 x), not from P.
2^t = 2^n 2^(j/32) 2^f, |f| <= 1/64 (plus t's low part): 2^(j/32) = T_j (1 + d_j) from two
32-entry tables, 2^f = 1 + f E(f), E of degree 2.

Usage: python tools/fit_pow32_avx512.py   (prints the C tables and constants and the measured
errors; a few seconds)
"""
import mpmath as mp
import numpy as np
from _lawson import horner, lawson

mp.mp.prec = 120
DEG_LOG, DEG_EXP = 4, 2
R_EXP = mp.mpf(1) / 64 + mp.mpf(2) ** -20       # f's bound, t's low part included


def interval(i):
    """[lo, hi) of interval i"""
    if i < 16:
        return 1 + i / 32, 1 + (i + 1) / 32
    return 0.75 + (i - 16) / 64, 0.75 + (i - 15) / 64


def floats_of(lo, hi):
    a = np.arange(np.float32(lo).view(np.int32), np.float32(hi).view(np.int32), dtype=np.int32)
    return a.view(np.float32).astype(np.float64)


def log_table():
    """[(1/c, max |r|)] of the 32 intervals: the 1/c (on a 2^-g grid) with the smallest max
    |r| among those whose m/c - 1 is a float for every m of the interval"""
    out = []
    for i in range(32):
        lo, hi = interval(i)
        m = floats_of(lo, hi)
        assert ((m.astype(np.float32).view(np.int32) >> 18) & 31 == i).all()
        if i in (0, 31):
            cands = [1.0]
        else:
            cands = [(round(2 / (lo + hi) * 2 ** g) + d) / 2 ** g
                     for g in range(12, 4, -1) for d in (-2, -1, 0, 1, 2)]
        best = None
        for ic in cands:
            r = m * ic - 1                                   # exact in float64
            if (r.astype(np.float32).astype(np.float64) == r).all():
                if best is None or np.abs(r).max() < best[1]:
                    best = (ic, float(np.abs(r).max()), float(r.min()), float(r.max()))
        out.append(best)
    return out


def f32(v):
    return float(np.float32(float(v)))


def fit_log(rlo, rhi, n=160):
    xs = [rlo + (rhi - rlo) * (1 - mp.cos(mp.pi * (j + 0.5) / n)) / 2 for j in range(n)]
    xs = [x for x in xs if x != 0]
    il, c2 = 1 / mp.log(2), -1 / (2 * mp.log(2))
    tgt = [(mp.log(1 + x, 2) - x * il - x * x * c2) / x ** 3 for x in xs]
    wt = [abs(x ** 3 / mp.log(1 + x, 2)) for x in xs]
    cf = [f32(v) for v in lawson(xs, tgt, wt, DEG_LOG, 30)]
    worst = max(abs((x * il + x * x * c2 + x ** 3 * horner(cf, x)) / mp.log(1 + x, 2) - 1)
                for x in (rlo + (rhi - rlo) * mp.mpf(j) / 1000 for j in range(1001)) if x != 0)
    return cf, worst


def fit_exp2(n=120):
    xs = [R_EXP * mp.cos(mp.pi * (j + 0.5) / n) for j in range(n)]
    tgt = [(mp.power(2, x) - 1) / x for x in xs]
    cf = [f32(v) for v in lawson(xs, tgt, [abs(x / mp.power(2, x)) for x in xs], DEG_EXP, 30)]
    worst = max(abs((1 + x * horner(cf, x)) / mp.power(2, x) - 1)
                for x in (R_EXP * (2 * mp.mpf(j) / 1000 - 1) for j in range(1001)))
    return cf, worst


def hexf(v):
    h = float(v).hex()
    mant, exp = h.split("p")
    mant = mant.rstrip("0").rstrip(".") if "." in mant else mant
    return f"{mant}p{exp}f"


def carray(name, vals):
    rows = [", ".join(hexf(v) for v in vals[k:k + 4]) for k in range(0, len(vals), 4)]
    body = ",\n    ".join(rows)
    return f"static const float {name}[32] __attribute__((aligned(64))) = {{\n    {body}}};"


def main():
    tab = log_table()
    rlo, rhi = min(t[2] for t in tab), max(t[3] for t in tab)
    invc = [t[0] for t in tab]
    lc = [-mp.log(mp.mpf(ic), 2) for ic in invc]
    th = [float(mp.nint(v * 2 ** 16) / 2 ** 16) for v in lc]
    tl = [f32(v - h) for v, h in zip(lc, th)]
    # vgetexpps gives the exponent of x's significand in [1, 2); for m in [0.75, 1)
    # (intervals 16..31) the exponent of the [0.75, 1.5) form is one more: added here
    th = [h + (i >= 16) for i, h in enumerate(th)]
    t2 = [mp.power(2, mp.mpf(j) / 32) for j in range(32)]
    te = [f32(v) for v in t2]
    de = [f32(v / mp.mpf(h) - 1) for v, h in zip(t2, te)]
    il, c2 = 1 / mp.log(2), -1 / (2 * mp.log(2))
    print(f"/* tools/fit_pow32_avx512.py: r in [{rlo:.5f}, {rhi:.5f}] */")
    for name, vals in (("sm_pow32f_invc", invc), ("sm_pow32f_th", th), ("sm_pow32f_tl", tl),
                       ("sm_pow32f_t", te), ("sm_pow32f_d", de)):
        print(carray(name, vals))
    for name, v in (("IL", il), ("C2", c2)):
        h = f32(v)
        print(f"#define SM_POW32F_{name}H {hexf(h)}\n#define SM_POW32F_{name}L {hexf(f32(v - h))}")
    cf, w = fit_log(mp.mpf(rlo), mp.mpf(rhi))
    print(f"/* log2(1 + r) relative error {float(w):.3g} (2^{float(mp.log(w, 2)):.1f}) */")
    for k, c in enumerate(cf):
        print(f"#define SM_POW32F_P{k} {hexf(c)}")
    cf, w = fit_exp2()
    print(f"/* 2^f relative error {float(w):.3g} (2^{float(mp.log(w, 2)):.1f}) */")
    for k, c in enumerate(cf):
        print(f"#define SM_POW32F_E{k} {hexf(c)}")


if __name__ == "__main__":
    main()
