"""Table and polynomial of csrc/simd_math_f64.h's AVX-512 float64 expm1 / tanh core
(issue 14 item 2): e^x = 2^n 2^(j/16) e^r, x = (16 n + j) ln2/16 + r, |r| <= ln2/32.

T_j = 2^(j/16) = T_hi + T_lo; the header reads, by j (the low 4 bits of the rounded
x 16/ln2, one vpermt2pd), bits(T_hi) - (j << 48) (adding k << 48, k = 16 n + j, gives the bits
of 2^n T_hi: no separate shift of n) and T_lo / T_hi (the low part relative to the high).
e^r - 1 = r + r^2 Q(r), Q fitted (Lawson-iterated least squares, mpmath) for the relative
error of r + r^2 Q against expm1(r) on |r| <= R (R a little above ln2/32: the rounding of
x 16/ln2 and of r).

Usage: python tools/fit_expm1_64.py [degree]    (prints the header block)
"""
import sys

import mpmath as mp
import numpy as np
from _lawson import lawson

mp.mp.prec = 200
DEG = int(sys.argv[1]) if len(sys.argv) > 1 else 5


def bits(v):
    return int(np.array([v], np.float64).view(np.uint64)[0])


def fit(R, n=120, iters=40):
    xs = [R * mp.cos(mp.pi * (j + 0.5) / n) for j in range(n)]
    tgt = [(mp.expm1(x) - x) / x ** 2 for x in xs]
    wt = [x * x / abs(mp.expm1(x)) for x in xs]
    c = lawson(xs, tgt, wt, DEG, iters)
    cf = [float(c[k]) for k in range(DEG + 1)]
    worst = 0
    for j in range(2001):
        x = mp.mpf(R) * (2 * j / 2000 - 1)
        if x == 0:
            continue
        p = mp.mpf(0)
        for k in reversed(range(DEG + 1)):
            p = p * x + mp.mpf(cf[k])
        worst = max(worst, abs((x + x * x * p) / mp.expm1(x) - 1))
    return cf, worst


def main():
    R = float(mp.log(2) / 32) * (1 + 2 ** -8)
    cf, worst = fit(R)
    hi, lo = [], []
    for j in range(16):
        t = mp.mpf(2) ** (mp.mpf(j) / 16)
        h = float(t)
        hi.append((bits(h) - (j << 48)) & (2 ** 64 - 1))
        lo.append(float((t - h) / h))
    l16 = mp.log(2) / 16
    l16hi = float(mp.nint(l16 * 2 ** 40) / 2 ** 40)          # 21+ trailing zero bits
    l16lo = float(l16 - l16hi)
    print(f"/* tools/fit_expm1_64.py: |r| <= {R:.6f}, Q degree {DEG}, relative error of "
          f"r + r^2 Q {float(worst):.3g} (2^{float(mp.log(worst, 2)):.1f}) */")
    print("static const int64_t __attribute__((aligned(64))) sm_expt_hi[16] = {")
    for j in range(0, 16, 4):
        print("    " + ", ".join(f"0x{v:016x}LL" for v in hi[j:j + 4]) + ("," if j < 12 else ""))
    print("};")
    print("static const double __attribute__((aligned(64))) sm_expt_lo[16] = {")
    for j in range(0, 16, 4):
        print("    " + ", ".join(v.hex() if v else "0.0" for v in lo[j:j + 4]) + ("," if j < 12 else ""))
    print("};")
    print(f"#define SM_EXPT_INVL16 {float(16 / mp.log(2)).hex()}")
    print(f"#define SM_EXPT_L16HI {l16hi.hex()}\n#define SM_EXPT_L16LO {l16lo.hex()}")
    print("#define SM_EXPT_Q {" + ", ".join(c.hex() for c in cf) + "}")


if __name__ == "__main__":
    main()
