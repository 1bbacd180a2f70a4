"""Polynomials of csrc/simd_math_pow32.h's float32 power (issue 14 item 2), computed in
double lanes as 2^(y log2 x) and rounded once to float32.

log2 x = k + log2 c + log2(1 + r), with simd_math_tab64.h's 16-interval table (r = z/c - 1,
|r| <= 0.0342, see tools/fit_log64.py); log2(1 + r) = r P(r), P of degree 5 fitted for
relative error. 2^t = 2^(n + j/16) 2^s, |s| <= 1/32, 2^s = 1 + s E(s), E of degree 3.
Budget: a float32 result is exact to 2^-24 relative; t = y log2 x is at most 128 in
magnitude on the fast lanes, so log2's relative error e gives 2^t a relative error of about
128 e ln2 when x is near 1 (log2 x itself relative there) -- e = 2^-37 costs 2^-30.5, 1/64
of a float32 ulp -- and 2^s's error adds its own (2^-38.5).

Usage: python tools/fit_pow32.py   (prints the coefficients, lowest order first, and the
measured relative errors with the coefficients rounded to double; a few seconds)
"""
import mpmath as mp
from _lawson import chebyshev_nodes, horner, lawson, worst_relative

mp.mp.prec = 120
R_LOG = 0.0342          # tools/fit_log64.py's max |r|, rounded up
R_EXP = mp.mpf(1) / 32
DEG_LOG, DEG_EXP = 5, 3


def fit_log():
    xs = chebyshev_nodes(R_LOG, 120)
    tgt = [mp.log(1 + x, 2) / x for x in xs]
    c = lawson(xs, tgt, [1 / abs(t) for t in tgt], DEG_LOG, 30)
    cf = [float(v) for v in c]
    return cf, worst_relative(R_LOG, lambda x: mp.log(1 + x, 2), lambda x: x * horner(cf, x))


def fit_exp2(deg, n=120, iters=30):
    """E of 2^s = 1 + s E(s) on |s| <= 1/32, degree deg (also tools/fit_pow64.py's)."""
    xs = [x for x in chebyshev_nodes(R_EXP, n) if x != 0]
    tgt = [(mp.power(2, x) - 1) / x for x in xs]
    c = lawson(xs, tgt, [abs(x / mp.power(2, x)) for x in xs], deg, iters)
    cf = [float(v) for v in c]
    return cf, worst_relative(R_EXP, lambda x: mp.power(2, x),
                              lambda x: 1 + x * horner(cf, x))


def main():
    for name, (cf, w) in (("SM_POW32_L", fit_log()), ("SM_POW32_E", fit_exp2(DEG_EXP))):
        print(f"/* tools/fit_pow32.py: relative error {float(w):.3g} "
              f"(2^{float(mp.log(w, 2)):.1f}) */")
        for k, c in enumerate(cf):
            print(f"#define {name}{k} {c.hex()}")


if __name__ == "__main__":
    main()
