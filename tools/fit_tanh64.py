"""Table of csrc/simd_math_tanh64.h's AVX-512 float64 tanh (issue 14 item 2).

The kernel computes e^(-2a) - 1 (a = |x|) the way simd_math_f64.h's sm_expm1t_core does
(tools/fit_expm1_64.py: x = (16 n + j) ln2/16 + r, 2^(j/16) from a 16-entry register table,
e^r - 1 = r + r^2 Q(r), the same Q), with one change: instead of the low part T_lo of
2^(j/16) = T_hi + T_lo (a second table read and three operations to fold T_lo (1 + p) into
the result), T_hi is taken as exact, T_hi = e^(j ln2/16 + eps_j), and eps_j = ln(T_hi) -
j ln2/16 (|eps_j| < 2^-53) joins the reduction: r = x - k ln2/16 - eps_j, one multiply-add
with the low part of ln2/16 (k Llo + eps_j, a register table read of -eps_j). eps_j is
stored as a double: its own rounding (2^-106) is far below what matters.

Usage: python tools/fit_tanh64.py    (prints the header block)
"""
import mpmath as mp

mp.mp.prec = 200


def main():
    neps = []
    for j in range(16):
        t = mp.mpf(2) ** (mp.mpf(j) / 16)
        h = mp.mpf(float(t))                 # T_hi: the table sm_expt_hi holds (fit_expm1_64.py)
        neps.append(float(-(mp.log(h) - j * mp.log(2) / 16)))
    print("/* tools/fit_tanh64.py: -eps_j = j ln2/16 - ln(T_hi_j), T_hi_j = 2^(j/16) rounded "
          "(simd_math_f64.h's sm_expt_hi) */")
    print("static const double __attribute__((aligned(64))) sm_tanh64_neps[16] = {")
    for j in range(0, 16, 4):
        row = ", ".join(float.hex(v) if v != 0 else "0.0" for v in neps[j:j + 4])
        print(f"    {row}{',' if j < 12 else ''}")
    print("};")


if __name__ == "__main__":
    main()
