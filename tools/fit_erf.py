"""Coefficient tables of csrc/simd_math_erf.h (float32 erf and gelu_erf; issue 14 item 2).

Prints the two table blocks of the header. Each piece's polynomial is fitted by Lawson-
weighted least squares (iteratively reweighted towards the minimax solution) in float64
against mpmath values, then rounded to float one coefficient at a time, lowest order first,
the remaining ones refitted after each rounding.

  erf   32 pieces [k/8, (k+1)/8); k < 4: erf a = a + a q(v) (q fitted to erf(a)/a - 1,
        relative weight); k >= 4: erf a = c0 + c0lo + v q(v), c0 + c0lo = erf(mid).
  G     G(a) = Q(a) e^(a^2/2), Q the upper normal tail; 16 pieces, quarter octaves of a + 1
        on [0, 15); the expansion point is the float nearest the centre at which G is a
        float to within 2^-12 of its ulp (Gal's accurate tables), so c0 alone is G(mid).
        The tables are rotated by 508 mod 16 (the header indexes them by bits(a + 1) >> 21).

Usage: python tools/fit_erf.py > tables.txt   (takes about a minute)
"""
import math
import re
import sys

import mpmath as mp
import numpy as np

mp.mp.prec = 120


def f32(v):
    return float(np.float32(v))


def grid(lo, hi, n=1500):
    k = np.arange(n)
    a = lo + (hi - lo) * (0.5 - 0.5 * np.cos(np.pi * (k + 0.5) / n))
    return np.concatenate([[lo, hi], a])


def lawson(V, y, w, it=100):
    u = np.ones_like(y) / len(y)
    for _ in range(it):
        sw = np.sqrt(u) * w
        c, *_ = np.linalg.lstsq(V * sw[:, None], y * sw, rcond=None)
        e = np.abs(V @ c - y) * w
        u = u * e + 1e-300
        u /= u.sum()
    return c, e.max()


def fit_rounded(y, w, v, powers):
    """y ~ sum c_p v^p over the given powers; c rounded to float lowest power first."""
    fixed = {}
    for _ in powers:
        free = [p for p in powers if p not in fixed]
        V = np.stack([v ** p for p in free], 1)
        c, _ = lawson(V, y - sum(cf * v ** p for p, cf in fixed.items()), w)
        fixed[free[0]] = f32(c[0])
    return [fixed[p] for p in powers]


def hilo(val):
    hi = f32(val)
    return hi, f32(float(val - hi))


def mp_erf(t):
    return mp.erf(mp.mpf(t))


def mp_G(t):
    t = mp.mpf(t)
    return 0.5 * mp.erfc(t / mp.sqrt(2)) * mp.exp(t * t / 2)


def erf_tables(d=5, npc=32, nrel=4):
    T = {k: [] for k in ["mid", "c0", "c0lo"] + ["c%d" % k for k in range(1, d + 1)]}
    worst = 0
    for i in range(npc):
        lo, hi = i / 8, (i + 1) / 8
        a = grid(lo, hi)
        a = a[a > 0]
        y = np.array([float(mp_erf(t)) for t in a])
        if i < nrel:
            mid = 0.0 if i == 0 else f32((lo + hi) / 2)
            v = a - mid
            cs = fit_rounded((y - a) / a, a / y, v, list(range(d)))
            p = a + a * sum(c * v ** k for k, c in enumerate(cs))
            c0 = c0lo = 0.0
        else:
            mid = f32((lo + hi) / 2)
            c0, c0lo = hilo(mp_erf(mid))
            v = a - mid
            cs = fit_rounded(y - c0 - c0lo, 1 / y, v, list(range(1, d + 1)))
            p = c0 + c0lo + sum(c * v ** (k + 1) for k, c in enumerate(cs))
        worst = max(worst, np.max(np.abs(p - y) / y))
        T["mid"].append(mid)
        T["c0"].append(c0)
        T["c0lo"].append(c0lo)
        for k in range(1, d + 1):
            T["c%d" % k].append(cs[k - 1])
    head = ("/* sm_erf_t: %d pieces of 1/8, degree %d (the first %d: erf a = a + a q(v)), max "
            "relative error (exact arithmetic) %.2e */" % (npc, d, nrel, worst))
    return emit("sm_erf_t", T, head, 0)


def gal_mid(lo, hi):
    """The float nearest the centre of [lo, hi) at which G is a float to 2^-12 ulp."""
    m0 = np.array([(lo + hi) / 2], np.float32).view(np.int32)[0]
    best = None
    for j in range(1 << 15):
        for sgn in (1, -1):
            m = float(np.array([m0 + sgn * j], np.int32).view(np.float32)[0])
            if not lo + 0.3 * (hi - lo) <= m <= hi - 0.3 * (hi - lo):
                continue
            g = 0.5 * math.erfc(m / math.sqrt(2)) * math.exp(m * m / 2)
            d = abs(g - f32(g)) / float(np.spacing(np.float32(g)))
            if best is None or d < best[0]:
                best = (d, m)
            if d < 2 ** -12:
                return m
    return best[1]


def G_tables(d=6, cap=14.6):
    parts, lo = [], 1.0
    for _ in range(16):
        step = 2.0 ** math.floor(math.log2(lo)) / 4
        parts.append((lo - 1, lo + step - 1))
        lo += step
    T = {k: [] for k in ["mid", "c0"] + ["c%d" % k for k in range(1, d + 1)]}
    worst = worst0 = 0
    for lo, hi in parts:
        hi = min(hi, cap)
        mid = gal_mid(lo, hi)
        gm = mp_G(mid)
        c0 = f32(gm)
        worst0 = max(worst0, abs(float((gm - c0) / gm)))
        a = grid(lo, hi)
        y = np.array([float(mp_G(t)) for t in a])
        v = a - mid
        cs = fit_rounded(y - float(gm), 1 / y, v, list(range(1, d + 1)))
        p = c0 + sum(c * v ** (k + 1) for k, c in enumerate(cs))
        worst = max(worst, np.max(np.abs(p - y) / y))
        T["mid"].append(mid)
        T["c0"].append(c0)
        for k in range(1, d + 1):
            T["c%d" % k].append(cs[k - 1])
    head = ("/* sm_gq_t: G in 16 pieces (rotated by 508 mod 16 = 12: the index is bits(a + 1) "
            ">> 21), degree 6, relative error (exact arithmetic) %.2e, of c0 %.1e */"
            % (worst, worst0))
    return emit("sm_gq_t", T, head, 508 % 16)


def hexf(x):
    if x == 0:
        return "0.0f"
    m = re.match(r"(-?0x1\.)([0-9a-f]{13})p([+-]\d+)", float(np.float32(x)).hex())
    return m.group(1) + m.group(2)[:6] + "p" + m.group(3).lstrip("+") + "f"


def emit(name, T, head, rot):
    out = [head]
    for k, L in T.items():
        if rot:
            L = L[-rot:] + L[:-rot]
        out.append("static const float %s_%s[%d] = {" % (name, k, len(L)))
        for j in range(0, len(L), 8):
            out.append("    " + ", ".join(hexf(x) for x in L[j:j + 8])
                       + ("," if j + 8 < len(L) else "};"))
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(erf_tables() + "\n\n" + G_tables() + "\n")
