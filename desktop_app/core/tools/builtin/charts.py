"""Bar and line charts as standalone inline SVG (no scripts, no fonts or images to load).

Pure functions: ``render_chart`` validates the data and returns ``<svg>...</svg>`` text with
every label escaped. Axes get "nice" ticks (1, 2, 5 × 10^n) and include zero, so bars of
negative values hang below the axis instead of being cut off.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from desktop_app.core.errors import ToolArgumentError

MAX_POINTS = 500
MAX_SERIES = 12
PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
           "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#8c564b"]
WIDTH, HEIGHT = 720, 420
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 20, 80


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (always at least two)."""
    if high == low:
        high = low + 1
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    start = math.floor(low / step) * step
    ticks = []
    value = start
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    if ticks[-1] < high:
        ticks.append(round(value, 10))
    return ticks


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 or value == int(value) else f"{value:.4g}"


def _validate(labels: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]]) -> None:
    if not labels:
        raise ToolArgumentError("A chart needs at least one label.")
    if len(labels) > MAX_POINTS:
        raise ToolArgumentError(f"{len(labels)} points is more than the limit of {MAX_POINTS}.")
    if not series or len(series) > MAX_SERIES:
        raise ToolArgumentError(f"A chart needs 1 to {MAX_SERIES} series, got {len(series)}.")
    for name, values in series:
        if len(values) != len(labels):
            raise ToolArgumentError(
                f"Series '{name}' has {len(values)} values but there are {len(labels)} labels.",
                hint="labels are the points along the x-axis, one per value (for example "
                     "the days or the items), not the column names; give exactly one value "
                     "(or null) per label.")
        for v in values:
            if v is not None and (isinstance(v, bool) or not math.isfinite(float(v))):
                raise ToolArgumentError(f"Series '{name}' contains {v!r}, which is not a number.")
    if all(v is None for _, values in series for v in values):
        raise ToolArgumentError("Every value is null; there is nothing to draw.")


def render_chart(kind: str, labels: Sequence[str],
                 series: Sequence[tuple[str, Sequence[float | None]]], *,
                 x_label: str = "", y_label: str = "") -> str:
    """An SVG bar or line chart. Raises ``ToolArgumentError`` for unusable data."""
    if kind not in ("bar", "line"):
        raise ToolArgumentError(f"Unknown chart kind '{kind}'.", hint="Use 'bar' or 'line'.")
    _validate(labels, series)
    numbers = [float(v) for _, values in series for v in values if v is not None]
    ticks = nice_ticks(min(0.0, *numbers), max(0.0, *numbers))
    low, high = ticks[0], ticks[-1]
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def y(value: float) -> float:
        return TOP + plot_h * (high - value) / (high - low)

    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
            f'width="{WIDTH}" height="{HEIGHT}" role="img" font-family="sans-serif" '
            f'font-size="12">')]
    for tick in ticks:
        ty = y(tick)
        out.append(f'<line x1="{LEFT}" y1="{ty:.1f}" x2="{WIDTH - RIGHT}" y2="{ty:.1f}" '
                   f'stroke="{"#444" if tick == 0 else "#ddd"}"/>')
        out.append(f'<text x="{LEFT - 6}" y="{ty + 4:.1f}" text-anchor="end">{_fmt(tick)}</text>')
    slot = plot_w / len(labels)
    step = max(1, math.ceil(len(labels) / 20))  # at most about 20 x labels stay readable
    for i, label in enumerate(labels):
        if i % step:
            continue
        lx = LEFT + slot * (i + 0.5)
        ly = TOP + plot_h + 16
        out.append(f'<text x="{lx:.1f}" y="{ly}" text-anchor="end" '
                   f'transform="rotate(-35 {lx:.1f} {ly})">{escape(label[:30])}</text>')
    zero = y(0.0)
    for s_index, (name, values) in enumerate(series):
        colour = PALETTE[s_index % len(PALETTE)]
        if kind == "bar":
            bar_w = slot * 0.8 / len(series)
            for i, v in enumerate(values):
                if v is None:
                    continue
                bx = LEFT + slot * i + slot * 0.1 + bar_w * s_index
                top, bottom = sorted((y(float(v)), zero))
                tip = f"{escape(name)} – {escape(labels[i])}: {_fmt(float(v))}"
                out.append(f'<rect x="{bx:.1f}" y="{top:.1f}" width="{bar_w:.1f}" '
                           f'height="{bottom - top:.1f}" fill="{colour}">'
                           f'<title>{tip}</title></rect>')
        else:
            segments: list[list[str]] = [[]]
            for i, v in enumerate(values):
                if v is None:  # a gap in the data breaks the line
                    segments.append([])
                    continue
                px, py = LEFT + slot * (i + 0.5), y(float(v))
                segments[-1].append(f"{px:.1f},{py:.1f}")
                tip = f"{escape(name)} – {escape(labels[i])}: {_fmt(float(v))}"
                out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}">'
                           f'<title>{tip}</title></circle>')
            for points in segments:
                if len(points) > 1:
                    out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
                               f'points="{" ".join(points)}"/>')
        lx = LEFT + 10 + 150 * (s_index % 4)
        ly = HEIGHT - 14 - 0 * (s_index // 4)
        out.append(f'<rect x="{lx}" y="{ly - 10 - 16 * (s_index // 4)}" width="12" height="12" '
                   f'fill="{colour}"/><text x="{lx + 16}" y="{ly - 16 * (s_index // 4)}">'
                   f'{escape(name[:20])}</text>')
    if y_label:
        out.append(f'<text x="14" y="{TOP + plot_h / 2:.0f}" text-anchor="middle" '
                   f'transform="rotate(-90 14 {TOP + plot_h / 2:.0f})">{escape(y_label)}</text>')
    if x_label:
        out.append(f'<text x="{LEFT + plot_w / 2:.0f}" y="{HEIGHT - 30}" text-anchor="middle">'
                   f'{escape(x_label)}</text>')
    out.append("</svg>")
    return "\n".join(out)
