"""Numbers written as JavaScript writes them (ECMAScript Number::toString), for answers that must read
exactly as the seed's TypeScript server's: `12345679`, `0.30000000000000004`, `1e+21`.

Python's `repr` of a float is already the shortest string that round-trips, as JavaScript's is; only
the layout (integer, fixed or exponent form) differs.
"""

from __future__ import annotations

import math
from decimal import Decimal


def js_number(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    if x < 0:
        return "-" + js_number(-x)
    _, digit_tuple, exponent = Decimal(repr(float(x))).as_tuple()
    digits = "".join(map(str, digit_tuple))
    stripped = digits.rstrip("0")
    exponent = int(exponent) + len(digits) - len(stripped)
    s, k = stripped, len(stripped)
    n = exponent + k  # the value is 0.s × 10^n
    if k <= n <= 21:
        return s + "0" * (n - k)
    if 0 < n <= 21:
        return f"{s[:n]}.{s[n:]}"
    if -6 < n <= 0:
        return "0." + "0" * (-n) + s
    e = n - 1
    mantissa = s if k == 1 else f"{s[0]}.{s[1:]}"
    return f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
