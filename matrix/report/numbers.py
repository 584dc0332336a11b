"""Numbers as the dashboard shows them: 3 significant digits with k, M,
G, ... (times in the unit that suits them); counts and seeds exact."""
from __future__ import annotations

import math
from typing import Optional

from .history import is_seed

_SUFFIXES = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"),
             (1e3, "k"))
_TIME = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "ms": 1e-3, "s": 1.0}
_TIME_NAMES = ((1.0, "s"), (1e-3, "ms"), (1e-6, "\u00b5s"), (1e-9, "ns"))
EXACT = 2 ** 53         # above, a double's integer may be a rounded one


def _g3(x: float) -> str:
    s = f"{x:.3g}"
    if "e" in s:
        m, e = s.split("e")
        s = f"{m}e{int(e)}"
    return s


def fmt(v: float) -> str:
    """3 significant digits, with k, M, G, T, P, E above a thousand:
    415e6 is 415M, 0.74161 is 0.742."""
    if v != v or v in (math.inf, -math.inf):
        return str(v)
    if v == 0:
        return "0"
    r = float(f"{v:.3g}")           # rounded first: 999.7 is 1k
    if abs(r) < 1e21:
        for scale, suffix in _SUFFIXES:
            if abs(r) >= scale:
                return _g3(r / scale) + suffix
    return _g3(r)


def fmt_unit(v: float, unit: Optional[str]) -> str:
    """fmt() and the unit; a time in the unit that suits it (3.1 ms, not
    3.1M ns)."""
    unit = unit or ""
    if unit in _TIME and v != 0 and v == v:
        sec = float(f"{v * _TIME[unit]:.3g}")
        for scale, name in _TIME_NAMES:
            if abs(sec) >= scale:
                return f"{_g3(sec / scale)} {name}"
        return f"{_g3(sec / 1e-9)} ns"
    n = fmt(v)
    return f"{n} {unit}" if unit else n


def seed_text(value: float, exact: Optional[str]) -> str:
    """A seed's digits; '≈' when only a double of it was kept."""
    if exact is not None:
        return exact
    n = int(value)
    return f"\u2248{n}" if abs(n) > EXACT else str(n)


def metric_text(name: str, value: float, exact: Optional[str],
                unit: Optional[str]) -> str:
    """A metric as the table shows it: seeds and counts exactly, the rest
    with fmt_unit()."""
    if is_seed(name):
        return seed_text(value, exact)
    if (unit or "") not in _TIME:
        if exact is None and value == value and abs(value) <= EXACT and \
                float(value).is_integer():
            exact = str(int(value))     # recorded before `exact`
        if exact is not None:
            return f"{exact} {unit}" if unit else exact
    return fmt_unit(value, unit)


def change_text(prev: float, now: float) -> str:
    if prev == now:
        return "="
    if prev == 0:
        return ("+" if now > 0 else "") + fmt(now)
    pct = (now - prev) / abs(prev) * 100
    return f"{'+' if pct > 0 else ''}{_g3(pct)}%"
