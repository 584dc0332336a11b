"""The dashboard's plots, as inline SVG: a metric across runs (median,
min-max band, the bar it is checked against, the newest value), and
sparklines."""
from __future__ import annotations

import dataclasses
import math
from typing import Optional

from .html import esc
from .numbers import fmt

@dataclasses.dataclass
class Point:
    i: int                      # the run's place on the axis, oldest 0
    run: str                    # its key, for the tooltip
    value: float
    lo: Optional[float] = None  # the band: min and max
    hi: Optional[float] = None


@dataclasses.dataclass
class Ref:
    """A bar: one value (dashed), or one per run (dotted, `per_run`)."""
    label: str
    value: Optional[float] = None
    per_run: list = dataclasses.field(default_factory=list)   # (i, value)
    checked: bool = True        # grey where the program does not check it


def _lin_ticks(lo: float, hi: float) -> list[float]:
    raw = (hi - lo) / 4
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step)
    return [k * step for k in range(first, int(math.floor(hi / step)) + 1)]


def _log_ticks(lo: float, hi: float) -> list[float]:
    e0, e1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))

    def at(mults):
        t = [float(f"{m * 10.0 ** e:.3g}") for e in range(e0, e1 + 1)
             for m in mults]
        return [v for v in t if lo <= v <= hi]
    t = at((1, 2, 5))
    if 3 <= len(t) <= 6:
        return t
    if len(t) > 6:
        t = at((1,))
        return t[::math.ceil(len(t) / 6)] if len(t) >= 2 else at((1, 2, 5))
    fine = at((1, 1.5, 2, 3, 5, 7))
    if 2 <= len(fine) <= 6:
        return fine
    return t if len(t) >= 2 else _lin_ticks(lo, hi)


def date_label(started: str) -> str:
    """'2026-12-03T13:01:43' as '12-03 13:01'."""
    s = str(started or "")
    return s[5:16].replace("T", " ") if len(s) >= 16 else s


def svg_plot(title: str, unit: str, points: list[Point], n: int,
             dates: tuple[str, str] = ("", ""), refs: tuple = (),
             log: bool = False, w: int = 380, h: int = 150) -> str:
    """A line of values over the last n runs (oldest left), the band of
    their min..max, the bars, and the newest value right of the plot."""
    left, right, top, bottom = 46, 80, 10, 24
    pw, ph = w - left - right, h - top - bottom
    vals = [p.value for p in points]
    vals += [v for p in points for v in (p.lo, p.hi) if v is not None]
    for r in refs:
        vals += ([r.value] if r.value is not None else [])
        vals += [v for _, v in r.per_run]
    log = log and min(vals) > 0
    lo, hi = min(vals), max(vals)
    if log:
        a, b = math.log10(lo), math.log10(hi)
        if b - a < 0.2:
            a, b = (a + b) / 2 - 0.1, (a + b) / 2 + 0.1
        pad = (b - a) * 0.06
        a, b = a - pad, b + pad
        lo, hi = 10 ** a, 10 ** b

        def y(v):
            return top + (b - math.log10(v)) * ph / (b - a)
        ticks = _log_ticks(lo, hi)
    else:
        pad = (hi - lo) * 0.06 if hi > lo else (abs(hi) * 0.1 or 1.0)
        lo = max(lo - pad, 0.0) if lo >= 0 else lo - pad
        hi += pad

        def y(v):
            return top + (hi - v) * ph / (hi - lo)
        ticks = _lin_ticks(lo, hi)

    def x(i):
        return left + (pw * i / (n - 1) if n > 1 else pw / 2)

    u = f" {unit}" if unit else ""
    parts = [f"<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" "
             f"width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" "
             f"role=\"img\" aria-label=\"{esc(title)}\" font-size=\"10\" "
             "font-family=\"sans-serif\">",
             f"<rect x=\"{left}\" y=\"{top}\" width=\"{pw}\" height=\"{ph}\" "
             "fill=\"#fafafa\" stroke=\"#bdbdbd\"/>"]
    for t in ticks:
        ty = y(t)
        parts.append(f"<line class=\"grid\" x1=\"{left}\" "
                     f"x2=\"{left + pw}\" y1=\"{ty:.1f}\" y2=\"{ty:.1f}\" "
                     "stroke=\"#e0e0e0\"/><text class=\"tick\" "
                     f"x=\"{left - 4}\" y=\"{ty + 3.5:.1f}\" "
                     f"text-anchor=\"end\" fill=\"#616161\">{fmt(t)}</text>")
    band = [p for p in points if p.lo is not None and p.hi is not None]
    if len(band) > 1:
        edge = [(x(p.i), y(p.hi)) for p in band] + \
            [(x(p.i), y(p.lo)) for p in reversed(band)]
        parts.append("<polygon class=\"band\" points=\"" +
                     " ".join(f"{a:.1f},{b:.1f}" for a, b in edge) +
                     "\" fill=\"#90caf9\" fill-opacity=\"0.6\"/>")
    elif band:
        p = band[0]
        parts.append(f"<rect class=\"band\" x=\"{x(p.i) - 5:.1f}\" "
                     f"y=\"{y(p.hi):.1f}\" width=\"10\" "
                     f"height=\"{max(y(p.lo) - y(p.hi), 1):.1f}\" "
                     "fill=\"#90caf9\" fill-opacity=\"0.6\"/>")
    halo = "paint-order=\"stroke\" stroke=\"#ffffff\" stroke-width=\"3\""
    labels = []             # drawn over the line, the points

    def beside(ry: float, line_y: float) -> float:
        """A label's baseline by a bar at ry: on the side away from the
        line at line_y, where there is room."""
        above, below = ry - 4, ry + 12
        if above - 10 < top:
            return below
        if below > top + ph:
            return above
        return above if line_y >= ry else below

    for r in refs:
        colour = "#c62828" if r.checked else "#757575"
        if r.value is not None:
            ry = y(r.value)
            ly = beside(ry, y(points[0].value))
            parts.append(f"<line class=\"ref\" x1=\"{left}\" "
                         f"x2=\"{left + pw}\" y1=\"{ry:.1f}\" "
                         f"y2=\"{ry:.1f}\" stroke=\"{colour}\" "
                         "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>")
            labels.append(f"<text class=\"ref-label\" x=\"{left + 4}\" "
                          f"y=\"{ly:.1f}\" fill=\"{colour}\" {halo}>"
                          f"{esc(r.label)}</text>")
        if r.per_run:
            pts = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in r.per_run)
            i, v = r.per_run[-1]
            ly = beside(y(v), y(points[-1].value))
            parts.append(f"<polyline class=\"ref checked\" points=\"{pts}\" "
                         f"fill=\"none\" stroke=\"{colour}\" "
                         "stroke-width=\"1.5\" stroke-dasharray=\"1.5 3\"/>")
            labels.append(f"<text class=\"ref-label\" "
                          f"x=\"{left + pw - 4}\" y=\"{ly:.1f}\" "
                          f"text-anchor=\"end\" fill=\"{colour}\" {halo}>"
                          f"{esc(r.label)}</text>")
    if len(points) > 1:
        pts = " ".join(f"{x(p.i):.1f},{y(p.value):.1f}" for p in points)
        parts.append(f"<polyline class=\"median\" points=\"{pts}\" "
                     "fill=\"none\" stroke=\"#1565c0\" stroke-width=\"1.8\"/>")
    for p in points:
        spread = (f" (min {fmt(p.lo)}, max {fmt(p.hi)})"
                  if p.lo is not None and p.hi is not None else "")
        parts.append(f"<circle cx=\"{x(p.i):.1f}\" cy=\"{y(p.value):.1f}\" "
                     f"r=\"2.5\" fill=\"#1565c0\"><title>{esc(p.run)}: "
                     f"{esc(fmt(p.value))}{esc(u)}{esc(spread)}</title>"
                     "</circle>")
    parts += labels
    last = points[-1]
    ly = min(max(y(last.value) + 4, top + 10), top + ph)
    parts.append(f"<text class=\"latest\" x=\"{left + pw + 6}\" "
                 f"y=\"{ly:.1f}\" font-size=\"12\" font-weight=\"bold\" "
                 f"fill=\"#0d47a1\">{esc(fmt(last.value) + u)}</text>")
    if last.lo is not None and last.hi is not None:
        sy = ly + 13 if ly + 13 <= h - 4 else ly - 15
        parts.append(f"<text class=\"latest-spread\" x=\"{left + pw + 6}\" "
                     f"y=\"{sy:.1f}\" fill=\"#616161\">"
                     f"{esc(fmt(last.lo))}\u2013{esc(fmt(last.hi))}</text>")
    runs = f"{n} run{'s' if n != 1 else ''}"
    if n > 1:
        parts.append(f"<text class=\"axis\" x=\"{left}\" y=\"{h - 7}\" "
                     f"fill=\"#616161\">{esc(dates[0])}</text>"
                     f"<text class=\"axis\" x=\"{left + pw / 2:.1f}\" "
                     f"y=\"{h - 7}\" text-anchor=\"middle\" fill=\"#616161\">"
                     f"{runs}</text>"
                     f"<text class=\"axis\" x=\"{left + pw}\" y=\"{h - 7}\" "
                     f"text-anchor=\"end\" fill=\"#616161\">"
                     f"{esc(dates[1])}</text>")
    else:
        parts.append(f"<text class=\"axis\" x=\"{left + pw / 2:.1f}\" "
                     f"y=\"{h - 7}\" text-anchor=\"middle\" fill=\"#616161\">"
                     f"{runs}, {esc(dates[1])}</text>")
    parts.append("</svg>")
    return "".join(parts)


def sparkline(points: list[tuple[int, float]], n: int, title: str) -> str:
    """A line of a metric over the last n runs, as wide as a word."""
    w, h, m = 100, 18, 3
    vals = [v for _, v in points]
    lo, hi = min(vals), max(vals)

    def x(i):
        return m + ((w - 2 * m) * i / (n - 1) if n > 1 else (w - 2 * m) / 2)

    def y(v):
        return h / 2 if hi == lo else m + (hi - v) * (h - 2 * m) / (hi - lo)

    out = [f"<svg class=\"spark\" xmlns=\"http://www.w3.org/2000/svg\" "
           f"width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" "
           f"role=\"img\" aria-label=\"{esc(title)}\"><title>{esc(title)}"
           "</title>"]
    if len(points) > 1:
        out.append("<polyline points=\"" + " ".join(
            f"{x(i):.1f},{y(v):.1f}" for i, v in points) + "\" fill=\"none\""
            " stroke=\"#1565c0\" stroke-width=\"1.2\"/>")
    i, v = points[-1]
    out.append(f"<circle cx=\"{x(i):.1f}\" cy=\"{y(v):.1f}\" r=\"2\" "
               "fill=\"#1565c0\"/></svg>")
    return "".join(out)
