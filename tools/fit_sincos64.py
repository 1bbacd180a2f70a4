"""Reduction constants and polynomials of csrc/simd_math_sincos64.h (issue 14 item 2): the
float64 sin / cos of the FMA levels (avx2, avx512), x = n pi/2 + r, |r| <= pi/4, sin r or
cos r per lane.

pi/2 = C1 + C2 + C3: C1 rounded to 53 bits (n C1 subtracted from x by one FMA, exact), C2
to 33 bits (n C2 exact for n < 2^20, so that r1 - n C2 is split into r + its rounding error
exactly by a fast two-sum), C3 the next 53 bits.
sin r = r + r^3 S(r^2), cos r = 1 - r^2/2 + r^4 C(r^2), S and C of degree DEG in r^2,
fitted (Lawson-iterated least squares, mpmath) for the relative error of the whole
expression against sin / cos on |r| <= R (R a little above pi/4: the rounding of x 2/pi).
The coefficients are rounded to double one at a time, lowest order first, the higher ones
refitted after each (so the fit absorbs the rounding of the leading ones).

Usage: python tools/fit_sincos64.py [degree]      (prints simd_math_sincos64.h's constants,
                                                   byte for byte; ~10 seconds)
"""
import sys

import mpmath as mp
from _lawson import lawson

mp.mp.prec = 200
DEG = int(sys.argv[1]) if len(sys.argv) > 1 else 5
R = mp.pi / 4 * (1 + mp.mpf(2) ** -20)


def fit(kind, n=80, iters=30):
    rs = [R * mp.cos(mp.pi * (j + 0.5) / (2 * n)) for j in range(n)]    # (0, R]
    if kind == "sin":
        f, lead = mp.sin, (lambda r: r)                # sin r = r + r^3 S(z)
        pw = 3
    else:
        f, lead = mp.cos, (lambda r: 1 - r * r / 2)    # cos r = 1 - z/2 + z^2 C(z)
        pw = 4
    fixed = []
    for k in range(DEG + 1):
        # the part not yet fixed: t = (f - lead - r^pw sum fixed_i z^i) / (r^pw z^k)
        xs, tgt, wt = [], [], []
        for r in rs:
            z = r * r
            done = sum(c * z ** i for i, c in enumerate(fixed))
            xs.append(z)
            tgt.append((f(r) - lead(r) - r ** pw * done) / (r ** pw * z ** k))
            wt.append(r ** pw * z ** k / abs(f(r)))
        c = lawson(xs, tgt, wt, DEG - k, iters)
        fixed.append(mp.mpf(float(c[0])))
    worst = 0
    for j in range(1, 4001):
        r = R * j / 4000
        z = r * r
        p = sum(c * z ** i for i, c in enumerate(fixed))
        worst = max(worst, abs((lead(r) + r ** pw * p) / f(r) - 1))
    return [float(c) for c in fixed], worst


def main():
    half = mp.pi / 2
    c1 = float(half)
    c2 = float(mp.nint((half - c1) * mp.mpf(2) ** 86) / mp.mpf(2) ** 86)   # 33 bits
    c3 = float(half - c1 - c2)
    print(f"#define SM_SC_C1 {c1.hex()}\n#define SM_SC_C2 {c2.hex()}\n#define SM_SC_C3 {c3.hex()}")
    print(f"#define SM_SC_2PI {float(2 / mp.pi).hex()}")
    for kind in ("sin", "cos"):
        cf, worst = fit(kind)
        print(f"/* {kind}: degree {DEG} in r^2, |r| <= {float(R):.9f}, relative error "
              f"{float(worst):.3g} (2^{float(mp.log(worst, 2)):.1f}) */")
        for k, c in enumerate(cf):
            print(f"#define SM_SC_{'S' if kind == 'sin' else 'K'}{k} {c.hex()}")


if __name__ == "__main__":
    main()
