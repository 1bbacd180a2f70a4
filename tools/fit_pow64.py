"""Polynomials of csrc/simd_math_pow64.h's float64 power (issue 14 item 2): x^y = 2^(y log2 x)
with log2 x carried as a double-double.

log2(1 + r) = r IL + r^2 (-IL/2) + r^3 Q(r) on |r| <= 0.0342 (the float64 log's 16-interval
table, tools/fit_log64.py), the first two terms computed as double-doubles, Q of degree 8
fitted for the relative error of the whole sum; 2^s = 1 + s E(s) on |s| <= 1/32, E of degree
6. Both errors are measured with the coefficients rounded to double (that rounding is what
limits them: 2^-64.8 and 2^-60.2; a longer Q or E gains nothing).

Usage: python tools/fit_pow64.py   (prints the coefficients, lowest order first; about a
minute: mpmath at 200 bits)
"""
import mpmath as mp
from _lawson import chebyshev_nodes, horner, lawson, worst_relative
from fit_pow32 import fit_exp2

mp.mp.prec = 200
R_LOG = 0.0342
DEG_Q, DEG_E = 8, 6
IL = 1 / mp.log(2)


def fit_q():
    xs = chebyshev_nodes(R_LOG)
    tgt = [(mp.log(1 + x, 2) - x * IL + x * x * IL / 2) / x ** 3 for x in xs]
    c = lawson(xs, tgt, [abs(x ** 3 / mp.log(1 + x, 2)) for x in xs], DEG_Q, 25)
    cf = [float(v) for v in c]
    return cf, worst_relative(R_LOG, lambda x: mp.log(1 + x, 2),
                              lambda x: x * IL - x * x * IL / 2 + x ** 3 * horner(cf, x))


def main():
    ilh = float(IL)
    print(f"#define SM_POW64_ILH {ilh.hex()}\n#define SM_POW64_ILL {float(IL - ilh).hex()}")
    for name, (cf, w) in (("SM_POW64_Q", fit_q()), ("SM_POW64_E", fit_exp2(DEG_E, 100, 25))):
        print(f"/* tools/fit_pow64.py: relative error 2^{float(mp.log(w, 2)):.1f} */")
        for k, c in enumerate(cf):
            print(f"#define {name}{k} {c.hex()}")


if __name__ == "__main__":
    main()
