"""Student's t distribution for whole degrees of freedom: its CDF and its quantile.

The prediction band (``core.prediction``) needs the t quantile of n - 1 degrees of freedom
for a handful of runs; no statistics package is a dependency, so it is computed here. For a
whole number of degrees of freedom the probability that |T| <= t has a closed form in
theta = atan(t / sqrt(df)) (Abramowitz and Stegun, 26.7.3 and 26.7.4): a finite series in
cos(theta), odd and even degrees of freedom apart. The quantile is found by bisection on it,
to well below the precision a band is shown with.
"""

from __future__ import annotations

import math


def t_cdf(t: float, df: int) -> float:
    """P(T <= t) for Student's t with ``df`` (>= 1, whole) degrees of freedom."""
    if df < 1 or df != int(df):
        raise ValueError("degrees of freedom must be a whole number >= 1")
    theta = math.atan(abs(t) / math.sqrt(df))
    cos2 = math.cos(theta) ** 2
    if df % 2:
        # odd: 2/pi (theta + sin cos (1 + 2/3 cos^2 + 2*4/(3*5) cos^4 + ...)), up to cos^(df-3)
        # (df = 1: the series is empty, 2 theta / pi)
        series, term = 0.0, 1.0
        for k in range(1, (df - 1) // 2 + 1):
            series += term
            term *= cos2 * (2 * k) / (2 * k + 1)
        inside = 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * series)
    else:
        # even: sin (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ...), up to cos^(df-2)
        series, term = 0.0, 1.0
        for k in range(1, df // 2 + 1):
            series += term
            term *= cos2 * (2 * k - 1) / (2 * k)
        inside = math.sin(theta) * series
    below = 0.5 + inside / 2
    return below if t >= 0 else 1.0 - below


def t_quantile(p: float, df: int) -> float:
    """The t with P(T <= t) = ``p`` (0 < p < 1) for ``df`` whole degrees of freedom."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be strictly between 0 and 1")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        high *= 2.0
    for _ in range(200):
        middle = (low + high) / 2
        if t_cdf(middle, df) < p:
            low = middle
        else:
            high = middle
        if high - low < 1e-12 * max(1.0, high):
            break
    return (low + high) / 2
