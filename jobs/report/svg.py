"""Small inline SVG charts: the report must open with no network and no plotting library, so the
two charts it needs (bars, epoch step lines) are drawn here as SVG text."""

from __future__ import annotations

from html import escape

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
SEVERITY_COLORS = {"CRITICAL": "#7b0000", "HIGH": "#d62728", "MEDIUM": "#ff7f0e", "LOW": "#bcbd22",
                   "INFO": "#1f77b4"}
FONT = "font-family='sans-serif' font-size='11'"


def _text(x, y, text, anchor="start", extra="") -> str:
    return f"<text x='{x:.1f}' y='{y:.1f}' text-anchor='{anchor}' {FONT} {extra}>{escape(str(text))}</text>"


def bar_chart(bars: list[tuple[str, float, str]], title: str, unit: str = "", width: int = 720) -> str:
    """Horizontal bars: (label, value, color) each; value labels at the bar ends."""
    if not bars:
        return ""
    row, left, top = 22, 220, 28
    height = top + row * len(bars) + 10
    peak = max(value for _, value, _ in bars) or 1
    span = width - left - 90
    parts = [f"<svg class='chart' role='img' width='{width}' height='{height}' "
             f"viewBox='0 0 {width} {height}'>", _text(8, 16, title, extra="font-weight='bold'")]
    for i, (label, value, color) in enumerate(bars):
        y = top + i * row
        length = max(1.0, span * value / peak)
        parts.append(_text(left - 6, y + 14, label[:36], "end"))
        parts.append(f"<rect x='{left}' y='{y + 3}' width='{length:.1f}' height='{row - 6}' "
                     f"fill='{color}'><title>{escape(label)}: {value:g}{unit}</title></rect>")
        parts.append(_text(left + length + 4, y + 14, f"{value:g}{unit}"))
    parts.append("</svg>")
    return "".join(parts)


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    if high <= low:
        return [low]
    step = (high - low) / count
    return [low + i * step for i in range(count + 1)]


def step_chart(series: list[tuple[str, list[tuple[float, float]], str]], title: str,
               x_label: str, width: int = 720, height: int = 240) -> str:
    """Step lines (a value holds until the next point): (name, [(x, y)...], dash) each.

    Epochs only change at records, so a step line reads right: the epoch a member had between two
    records is the earlier one.
    """
    points = [p for _, pts, _ in series for p in pts]
    if not points:
        return ""
    left, right, top, bottom = 48, 170, 26, 34
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y0, y1 = min(ys + [0]), max(ys) if max(ys) > min(ys + [0]) else min(ys + [0]) + 1
    plot_w, plot_h = width - left - right, height - top - bottom

    def sx(x):
        return left + plot_w * (x - x0) / (x1 - x0)

    def sy(y):
        return top + plot_h * (1 - (y - y0) / (y1 - y0))

    parts = [f"<svg class='chart' role='img' width='{width}' height='{height}' "
             f"viewBox='0 0 {width} {height}'>", _text(8, 16, title, extra="font-weight='bold'"),
             f"<rect x='{left}' y='{top}' width='{plot_w}' height='{plot_h}' fill='#fafafa' "
             "stroke='#ccc'/>"]
    for tick in sorted({round(t) for t in _ticks(y0, y1)}):
        parts.append(f"<line x1='{left}' x2='{left + plot_w}' y1='{sy(tick):.1f}' "
                     f"y2='{sy(tick):.1f}' stroke='#e4e4e4'/>")
        parts.append(_text(left - 4, sy(tick) + 4, tick, "end"))
    for tick in sorted({round(t) for t in _ticks(x0, x1, 4)}):  # log offsets are whole numbers
        parts.append(_text(sx(tick), top + plot_h + 14, tick, "middle"))
    parts.append(_text(left + plot_w / 2, height - 4, x_label, "middle"))
    for i, (name, pts, dash) in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        path, previous = [], None
        for x, y in sorted(pts):
            if previous is not None:
                path.append(f"L{sx(x):.1f},{sy(previous):.1f}")
            path.append(("M" if previous is None else "L") + f"{sx(x):.1f},{sy(y):.1f}")
            previous = y
        if previous is not None:
            path.append(f"L{left + plot_w:.1f},{sy(previous):.1f}")
        parts.append(f"<path d='{' '.join(path)}' fill='none' stroke='{color}' stroke-width='2' "
                     f"stroke-dasharray='{dash}'><title>{escape(name)}</title></path>")
        for x, y in pts:
            parts.append(f"<circle cx='{sx(x):.1f}' cy='{sy(y):.1f}' r='2.5' fill='{color}'/>")
        ly = top + 10 + i * 14
        parts.append(f"<line x1='{width - right + 10}' x2='{width - right + 28}' y1='{ly - 4}' "
                     f"y2='{ly - 4}' stroke='{color}' stroke-width='2' stroke-dasharray='{dash}'/>")
        parts.append(_text(width - right + 32, ly, name[:22]))
    parts.append("</svg>")
    return "".join(parts)
