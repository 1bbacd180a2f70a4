"""Tables of csrc/simd_math_exp64.h's AVX-512 float64 erf (issue 14 item 2): a = |x| on 16
pieces, piece i = round(a / 0.385): piece 0 is [0, 0.1925), piece i >= 1 is [(i - 1/2) 0.385,
(i + 1/2) 0.385), up to 5.9675 (erf rounds to 1 above 5.9216; the header clamps a to 5.96),
one polynomial of degree 12 per piece, no exp, no division. (The half-width piece 0 is what lets
degree 12 do what degree 13 did on 16 pieces of width 0.375 from 0.)

Piece 0: erf a = a g(a), g of degree 11 fitted for relative error (a tiny: the result is
relative); the header ends it as a (c1 - 1) + a, the + a exact in the last multiply-add
(there u = max(c0, w) = w), c1 - 1 stored (a double 8 times finer than c1's), so that its
rounding and the last one of the polynomial count at 0.128 / 1.128.
Piece i >= 1: w = a - c_i with c_i a double near the piece's centre chosen so that erf(c_i)
lies within about 2^-11 ulp of the double c0 (a search over nearby doubles): the polynomial's
value at w = 0 is erf(c_i) itself, not erf(c_i) rounded plus the rest's error; w = a - c_i is
exact (Sterbenz: c_i / 2 <= a <= 2 c_i on the piece). Piece 1's c_1 is near 0.29, not its
centre: |w| stays small where erf < 1/4 (ulp 2^-55), and c0 = erf(c_1) > |w| on the piece, which
the header's u = max(c0, w) needs; its fit is weighted by 1 / erf too. erf(c_i + w) =
c0 + w h(w), h of degree 11 fitted for absolute error (Lawson-iterated least squares, mpmath) in
two steps: the fit, then c1 rounded to double and the rest refitted around it. Above a = 5.2 no
double lies that close to erf(c_i) (erf is too flat there to search): c0 is fitted with the rest.

Usage: python tools/fit_erf64.py    (prints the header block; some minutes, 2 processes)
"""
from multiprocessing import Pool

import mpmath as mp
from _lawson import lawson

mp.mp.prec = 160
W = 0.385
NP = 16
DEG = 12
C1 = round(0.29 * 2 ** 24) / 2 ** 24   # piece 1's c (see above)


def dbl_dist(v):
    """|v - nearest double| in ulps of that double"""
    d = float(v)
    m, e = mp.frexp(d)
    return abs(v - d) / mp.ldexp(1, e - 53)


def pick_centre(m):
    best = None
    for k in range(-1500, 1501):
        c = m + k * 2.0 ** -24
        dd = dbl_dist(mp.erf(c))
        if best is None or dd < best[0]:
            best = (dd, c)
    return best[1], best[0]


def fit_piece(i, n=70):
    lo, hi = max(i - 0.5, 0) * W, (i + 0.5) * W
    eps = 2.0 ** -30
    if i == 0:
        c, c0 = 0.0, mp.mpf(0)
        F = lambda w: mp.erf(w)                                # noqa: E731
        a, b = mp.mpf(2) ** -40, mp.mpf(hi + eps)
        rel, free = True, False
    else:
        c, dd = pick_centre(i * W if i > 1 else C1)
        c0 = mp.mpf(float(mp.erf(c)))
        free = dd > 2 ** -6         # erf near 1: no double this close, c0 fitted too
        F = lambda w, c=c, c0=c0: mp.erf(c + w) - c0         # noqa: E731
        a, b = mp.mpf(lo - eps) - c, mp.mpf(hi + eps) - c
        rel = False
    xs = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (j + 0.5) / n) for j in range(n)]
    xs = [x for x in xs if abs(x) > 2 ** -20]
    fx = [F(x) for x in xs]
    if free:
        cc = lawson(xs, [f + c0 for f in fx], [1] * len(xs), DEG, 30)
        coef = [float(v) for v in cc]
        c0 = mp.mpf(coef[0])
        F = lambda w, c=c: mp.erf(c + w)                     # noqa: E731
        fx = [F(x) for x in xs]
    fixed = [] if not free else [mp.mpf(v) for v in coef[1:]]
    for step in range(0 if free else 2):
        m = len(fixed)
        tgt = [(f - sum(fixed[k] * x ** (k + 1) for k in range(m))) / x ** (m + 1)
               for x, f in zip(xs, fx)]
        wt = [abs(x) ** (m + 1) / (abs(f) if rel else 1) * (1 / mp.erf(c + x) if i == 1 else 1)
              for x, f in zip(xs, fx)]
        cc = lawson(xs, tgt, wt, DEG - 1 - m, 30)
        if step == 0:       # piece 0 stores c1 - 1 (0.128: a finer double than c1's)
            fixed.append(mp.mpf(float(cc[0] - 1)) + 1 if i == 0 else mp.mpf(float(cc[0])))
        else:
            fixed += [mp.mpf(float(v)) for v in cc]
    coef = [mp.mpf(float(c0))] + [mp.mpf(float(v)) if k or i else v for k, v in enumerate(fixed)]
    # error check on a dense grid (the double coefficients, exact arithmetic)
    worst = 0
    for j in range(801):
        x = a + (b - a) * j / 800
        if x == 0:
            continue
        p = mp.mpf(0)
        for k in reversed(range(DEG + 1)):
            p = p * x + coef[k]
        e = abs(p - mp.erf(c + x))
        e = e / (mp.erf(c + x) * 2 ** -53) if rel else e / 2 ** -53
        worst = max(worst, e)
    if i == 0:
        coef[1] -= 1
    return c, [float(v) for v in coef], worst


def main():
    rows = []
    with Pool(2) as pool:
        res = pool.map(fit_piece, range(NP))
    for i, (c, coef, worst) in enumerate(res):
        rows.append((c, coef))
        print(f"/* piece {i}: c = {c!r}, error {float(worst):.3g} (units of 2^-53"
              f"{', relative' if i == 0 else ''}) */", flush=True)
    print("/* tools/fit_erf64.py: erf on 16 pieces of width 0.385 (piece 0: half), degree 12 */")
    print(f"static const double __attribute__((aligned(64))) sm_erf64_tab[{DEG + 2}][16] = {{")
    tab = [[r[0] for r in rows]] + [[r[1][k] for r in rows] for k in range(DEG + 1)]
    for k, line in enumerate(tab):
        s = ", ".join(v.hex() if v else "0.0" for v in line)
        print(f"    {{{s}}}" + ("," if k < len(tab) - 1 else ""))
    print("};")


if __name__ == "__main__":
    main()
