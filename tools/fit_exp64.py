"""Table and polynomial of csrc/simd_math_exp64.h's AVX-512 float64 exp (issue 14 item 2):
e^x = 2^n 2^(j/16) e^r, x = (16 n + j) ln2/16 + r, |r| <= ln2/32.

T_j = 2^(j/16) = T_hi (1 + T_l): T_hi printed here (plain doubles, one vpermt2pd by j, the
low 4 bits of the rounded x 16/ln2), T_l is simd_math_f64.h's sm_expt_lo (tools/fit_expm1_64.py).
e^r - 1 = r + r^2 Q(r), Q fitted (Lawson-iterated least squares, mpmath) for the ABSOLUTE
error of r + r^2 Q against expm1(r) on |r| <= R (R a little above ln2/32): exp adds it to 1,
so the relative accuracy near r = 0 that expm1 needs is not needed, one degree fewer.

Usage: python tools/fit_exp64.py [degree]    (prints the header block)
"""
import sys

import mpmath as mp
from _lawson import lawson

mp.mp.prec = 200
DEG = int(sys.argv[1]) if len(sys.argv) > 1 else 4


def fit(R, n=100, iters=40):
    xs = [R * mp.cos(mp.pi * (j + 0.5) / n) for j in range(n)]
    xs = [x for x in xs if x != 0]
    tgt = [(mp.expm1(x) - x) / x ** 2 for x in xs]
    wt = [x * x for x in xs]
    c = lawson(xs, tgt, wt, DEG, iters)
    cf = [float(c[k]) for k in range(DEG + 1)]
    worst = 0
    for j in range(2001):
        x = mp.mpf(R) * (2 * j / 2000 - 1)
        p = mp.mpf(0)
        for k in reversed(range(DEG + 1)):
            p = p * x + mp.mpf(cf[k])
        worst = max(worst, abs(x + x * x * p - mp.expm1(x)))
    return cf, worst


def main():
    R = float(mp.log(2) / 32) * (1 + 2 ** -8)
    cf, worst = fit(R)
    hi = [float(mp.mpf(2) ** (mp.mpf(j) / 16)) for j in range(16)]
    print(f"/* tools/fit_exp64.py: |r| <= {R:.6f}, Q degree {DEG}, absolute error of "
          f"r + r^2 Q {float(worst):.3g} (2^{float(mp.log(worst, 2)):.1f}) */")
    print("static const double __attribute__((aligned(64))) sm_exp64_thi[16] = {")
    for j in range(0, 16, 4):
        print("    " + ", ".join(v.hex() for v in hi[j:j + 4]) + ("," if j < 12 else ""))
    print("};")
    print(f"#define SM_EXP64_INVLN2 {float(1 / mp.log(2)).hex()}")
    l2 = mp.log(2)
    l2hi = float(mp.nint(l2 * 2 ** 36) / 2 ** 36)          # n ln2hi exact: |n| < 2^16
    print(f"#define SM_EXP64_LN2HI {l2hi.hex()}\n#define SM_EXP64_LN2LO {float(l2 - l2hi).hex()}")
    print("#define SM_EXP64_Q {" + ", ".join(c.hex() for c in cf) + "}")


if __name__ == "__main__":
    main()
