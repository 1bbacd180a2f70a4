"""Tables and polynomial of csrc/simd_math_f64.h's AVX-512 float64 log / log2 / log1p
(issue 14 item 2): log x = k ln2 + log c + log1p(r), r = z / c - 1 computed exactly.

x = 2^k z with z in [OFF, 2 OFF), OFF = 0.765625 (bits 0x3fe8800000000000); 16 intervals of z,
interval i = bits(z) - bits(OFF) >> 48 (a register table: one vpermt2pd per lookup). The
intervals are 2^-5 wide below 1 and 2^-4 above, and interval 7 is [1 - 2^-6, 1 + 2^-5), the
one holding 1, with c = 1 (r = z - 1 exact, log c = 0: the result is relative near 1). For
the others 1/c = invc is a multiple of 2^-q small enough that z * invc - 1 is a double for
every z of the interval (so one FMA gives r exactly): q = 5 above 1, 4 or 5 below.
log c = -log(invc) is split hi + lo with hi a multiple of 2^-42, like LN2HI, so that
k LN2HI + hi is exact (|k| <= 1075); log2 the same with log2 c.
log1p(r) = r + r^2 Q(r), Q of degree 8 fitted (Lawson-iterated least squares, mpmath) for
relative error of r + r^2 Q against log1p(r) over |r| <= R (the largest |r| of the table).

Usage: python tools/fit_log64.py      (prints the tables, LN2HI/LO and Q's coefficients, the
header's SM_LOGT_C0..C8, lowest order first; a few seconds)
"""
import mpmath as mp
import numpy as np
from _lawson import lawson

mp.mp.prec = 200
OFF = 0x3fe8800000000000
ONE = 0x3ff0000000000000
DEG = 8


def f64(bits):
    return float(np.array([bits], np.uint64).view(np.float64)[0])


def intervals():
    out = []
    for i in range(16):
        lo = f64(OFF + i * (1 << 48))
        hi = f64(OFF + (i + 1) * (1 << 48) - 1)
        out.append((lo, hi))
    return out


def exact_ok(lo, hi, invc, q):
    """z * invc - 1 representable for all z in [lo, hi]: a sufficient bound on |r| given
    the lattice ulp(z) 2^-q of the product."""
    r = max(abs(mp.mpf(lo) * invc - 1), abs(mp.mpf(hi) * invc - 1))
    ulpz = 2.0 ** -52 if lo >= 1 else 2.0 ** -53
    return r < 2 ** 53 * ulpz * 2.0 ** -q, r


def choose_invc():
    res = []
    for i, (lo, hi) in enumerate(intervals()):
        if lo <= 1 <= hi:
            res.append((1.0, max(abs(lo - 1), abs(hi - 1))))
            continue
        best = None
        for q in range(0, 12):
            c = 2 / (mp.mpf(lo) + mp.mpf(hi))
            for m in (mp.floor(c * 2 ** q), mp.ceil(c * 2 ** q)):
                invc = float(m / 2 ** q)
                ok, r = exact_ok(lo, hi, invc, q)
                if ok and (best is None or r < best[1]):
                    best = (invc, r)
        res.append(best)
    return res


def split42(v):
    hi = mp.nint(v * 2 ** 42) / 2 ** 42
    return float(hi), float(v - hi)


def fit(R, n=160, iters=40):
    xs = [R * mp.cos(mp.pi * (j + 0.5) / n) for j in range(n)]
    xs = [x for x in xs if abs(x) > 1e-30]
    tgt = [(mp.log1p(x) - x) / x ** 2 for x in xs]
    wt = [x * x / abs(mp.log1p(x)) for x in xs]       # error relative to log1p(r)
    c = lawson(xs, tgt, wt, DEG, iters)
    cf = [float(c[k]) for k in range(DEG + 1)]
    cf[0] = -0.5
    # measured with the coefficients rounded, on a fine grid
    worst = 0
    for j in range(2001):
        x = mp.mpf(R) * (2 * j / 2000 - 1)
        if x == 0:
            continue
        p = mp.mpf(0)
        for k in reversed(range(DEG + 1)):
            p = p * x + mp.mpf(cf[k])
        worst = max(worst, abs((x + x * x * p) / mp.log1p(x) - 1))
    return cf, worst


def main():
    inv = choose_invc()
    R = max(r for _, r in inv)
    lc = [split42(-mp.log(mp.mpf(v))) for v, _ in inv]
    l2 = [split42(-mp.log(mp.mpf(v), 2)) for v, _ in inv]
    cf, worst = fit(float(R) * 1.0001)
    ln2hi, ln2lo = split42(mp.log(2))
    print(f"/* tools/fit_log64.py: max |r| = {float(R):.5f}, Q degree {DEG}, relative error "
          f"of r + r^2 Q {float(worst):.3g} (2^{float(mp.log(worst, 2)):.1f}) */")
    fmt = lambda v: float(v).hex().replace("0x0.0p+0", "0.0")
    def tab(name, vals):
        print(f"static const double {name}[16] = {{")
        for j in range(0, 16, 4):
            print("    " + ", ".join(fmt(v) for v in vals[j:j + 4]) + ("," if j < 12 else ""))
        print("};")
    tab("sm_logt_invc", [v for v, _ in inv])
    tab("sm_logt_hi", [h for h, _ in lc])
    tab("sm_logt_lo", [l for _, l in lc])
    tab("sm_log2t_hi", [h for h, _ in l2])
    tab("sm_log2t_lo", [l for _, l in l2])
    print(f"#define SM_LOGT_LN2HI {fmt(ln2hi)}\n#define SM_LOGT_LN2LO {fmt(ln2lo)}")
    print("/* Q(r) = " + " ".join(f"c{k}" for k in range(DEG + 1)) + " */")
    print("#define SM_LOGT_Q {" + ", ".join(fmt(c) for c in cf) + "}")
    for i, ((v, r), (lo, hi)) in enumerate(zip(inv, intervals())):
        print(f"/* {i:2d} z [{lo:.6f}, {hi:.6f}] invc {v!r} |r| <= {float(r):.5f} */")


if __name__ == "__main__":
    main()
