"""Labels placed, not guessed: each label tries offsets around its point and takes the one that covers least.

A label's box must stay inside the plot and should overlap no label or mark
already placed; curves weigh a little, so a label moves off a curve when it can.

Trying an offset means making the annotation and measuring it, with its bbox and
its arrow (most of the time of a report's figure went there). So each offset's
cost is first bounded from below, cheaply: the annotation's box holds its text's
box (measured once per alignment, then moved to the offset) and, with an arrow,
the arrow's end, `SHRINK` short of the labelled point on the line to the text's
centre; a box inside another covers no more, so costs no more. An offset whose bound is over the best
cost found so far cannot win, and is not tried: the choice is the one that trying
every offset makes.
"""

from __future__ import annotations

import numpy as np

SLACK = 0.01  # display px the bound's text box is shrunk by, against rounding in where the text lands
ARROW_SLACK = 0.2  # display px, against rounding in whether an arrow is drawn at all (`_apart`)
# display px: matplotlib finds where the arrow ends by bisection, to 0.01 px. Tight, because the tip of a
# label's arrow sits on its own mark, a heavy obstacle: each 0.1 px of slack there lowers every offset's
# bound by about a thousand, more than the costs of the offsets differ by, and they would all be tried
TIP_SLACK = 0.02
# an annotation's arrow stops 2 points short of both its ends (matplotlib's default), and until it is
# drawn matplotlib takes a point for a display px there: how short, in display px, when it is measured
SHRINK = 2.0
TIE = 1e-9  # relative: a bound this near the least cost is tried (the two sum in different orders)
ARROW_CLEAR = 2 * SHRINK + 1.0  # display px: a point this far outside the label's patch gets an arrow that far

# offsets to try, in points from the labelled point, nearest first
OFFSETS = [
    (10, 10), (10, -10), (-10, 10), (-10, -10),
    (16, 28), (16, -28), (-16, 28), (-16, -28),
    (0, 42), (0, -42), (34, 0), (-34, 0),
    (30, 56), (30, -56), (-30, 56), (-30, -56),
    (0, 72), (0, -72), (60, 30), (-60, 30), (60, -30), (-60, -30),
]  # fmt: skip


class Placer:
    """Puts annotations where they cover the least (a simple adjustText).

    Obstacles are boxes in display space with a weight: placed labels and marks
    weigh most, curve points a little. Each label tries a list of offsets around
    its point and takes the one whose box stays inside the plot and covers the
    least weight: the first that covers nothing, when there is one.
    """

    HEAVY = 1000.0

    def __init__(self, ax):
        self.ax = ax
        self.renderer = ax.figure.canvas.get_renderer()
        self.boxes = np.zeros((0, 4))
        self.weights = np.zeros(0)

    def _add(self, boxes: np.ndarray, weight: float) -> None:
        self.boxes = np.vstack([self.boxes, boxes])
        self.weights = np.concatenate([self.weights, np.full(len(boxes), weight)])

    def block(self, x: float, y: float, pad: float = 6.0) -> None:
        """Keep labels off a mark at (x, y), in data coordinates."""
        px, py = self.ax.transData.transform((x, y))
        self._add(np.array([[px - pad, py - pad, px + pad, py + pad]]), self.HEAVY)

    def block_line(self, xs, ys, pad: float = 1.5) -> None:
        """Keep labels off a curve, if they can."""
        ok = np.isfinite(xs) & np.isfinite(ys)
        pts = self.ax.transData.transform(np.column_stack([xs[ok], ys[ok]]))
        self._add(np.column_stack([pts[:, 0] - pad, pts[:, 1] - pad, pts[:, 0] + pad, pts[:, 1] + pad]), 1.0)

    def block_artist(self, artist) -> None:
        """Keep labels off a text already drawn."""
        bb = artist.get_window_extent(self.renderer)
        self._add(np.array([[bb.x0, bb.y0, bb.x1, bb.y1]]), self.HEAVY)

    def _cost(self, bb, frame) -> float:
        return self._box_cost(bb.x0, bb.y0, bb.x1, bb.y1, frame)

    def _box_cost(self, x0: float, y0: float, x1: float, y1: float, frame) -> float:
        b = self.boxes
        w = np.clip(np.minimum(b[:, 2], x1) - np.maximum(b[:, 0], x0), 0, None)
        h = np.clip(np.minimum(b[:, 3], y1) - np.maximum(b[:, 1], y0), 0, None)
        cost = float(np.sum(w * h * self.weights))
        inside = max(0.0, min(x1, frame.x1) - max(x0, frame.x0)) * max(0.0, min(y1, frame.y1) - max(y0, frame.y0))
        outside = (x1 - x0) * (y1 - y0) - inside
        return cost + outside * self.HEAVY * 10

    def _bounds(self, x: float, y: float, text: str, offsets, kw: dict, frame) -> list[float]:
        """For each offset, a cost no larger than the annotation's there (see the module's doc)."""
        px, py = self.ax.transData.transform((x, y))
        if not self.ax.contains_point((px, py)):
            return [-np.inf] * len(offsets)  # matplotlib measures such an annotation as a unit box: no bound
        scale = self.ax.figure.dpi / 72.0  # "offset points"
        arrow = kw.get("arrowprops") is not None
        text_box, patch_box = self._measure(text, kw)  # anchored at its lower left corner
        w, h = text_box[2] - text_box[0], text_box[3] - text_box[1]
        boxes = []
        for dx, dy in offsets:
            ha, va = _align(dx, dy)
            # the alignment moves the box by none, half or all of its size (matplotlib's text layout)
            ox = px + dx * scale - {"left": 0.0, "center": w / 2, "right": w}[ha]
            oy = py + dy * scale - {"bottom": 0.0, "center": h / 2, "top": h}[va]
            x0, y0 = ox + text_box[0] + SLACK, oy + text_box[1] + SLACK
            x1, y1 = ox + text_box[2] - SLACK, oy + text_box[3] - SLACK
            patch = [ox + patch_box[0], oy + patch_box[1], ox + patch_box[2], oy + patch_box[3]]
            if arrow and _apart((px, py), patch, ARROW_CLEAR + ARROW_SLACK):
                # the arrow runs from the text's centre to the point, and stops SHRINK short of it
                cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
                d = float(np.hypot(cx - px, cy - py))
                ex, ey = px + (cx - px) * (SHRINK + TIP_SLACK) / d, py + (cy - py) * (SHRINK + TIP_SLACK) / d
                x0, x1, y0, y1 = min(x0, ex), max(x1, ex), min(y0, ey), max(y1, ey)
            boxes.append((x0 - 2.0, y0 - 2.0, x1 + 2.0, y1 + 2.0))
        return self._box_costs(np.array(boxes), frame).tolist()

    def _box_costs(self, c: np.ndarray, frame) -> np.ndarray:
        """`_box_cost` of many boxes (rows x0, y0, x1, y1) at once."""
        b = self.boxes
        w = np.clip(np.minimum(b[None, :, 2], c[:, None, 2]) - np.maximum(b[None, :, 0], c[:, None, 0]), 0, None)
        h = np.clip(np.minimum(b[None, :, 3], c[:, None, 3]) - np.maximum(b[None, :, 1], c[:, None, 1]), 0, None)
        cost = (w * h) @ self.weights
        iw = np.clip(np.minimum(c[:, 2], frame.x1) - np.maximum(c[:, 0], frame.x0), 0, None)
        ih = np.clip(np.minimum(c[:, 3], frame.y1) - np.maximum(c[:, 1], frame.y0), 0, None)
        outside = (c[:, 2] - c[:, 0]) * (c[:, 3] - c[:, 1]) - iw * ih
        return cost + outside * self.HEAVY * 10

    def _measure(self, text: str, kw: dict) -> tuple:
        """The text's box and its bbox patch's box (the text's, without one), aligned left and bottom at (0, 0)."""
        from matplotlib.text import Text
        from matplotlib.transforms import IdentityTransform

        props = {k: v for k, v in kw.items() if k not in ("arrowprops", "zorder")}
        probe = Text(0.0, 0.0, text, ha="left", va="bottom", transform=IdentityTransform(), **props)
        probe.set_figure(self.ax.figure)
        bb = probe.get_window_extent(self.renderer)
        box = (bb.x0, bb.y0, bb.x1, bb.y1)
        if probe.get_bbox_patch() is None:
            return box, box
        probe.update_bbox_position_size(self.renderer)
        pb = probe.get_bbox_patch().get_window_extent(self.renderer)
        return box, (min(pb.x0, box[0]), min(pb.y0, box[1]), max(pb.x1, box[2]), max(pb.y1, box[3]))

    def place(self, x: float, y: float, text: str, offsets=OFFSETS, **kw):
        """Annotate (x, y) with `text` at the offset that covers least; the label then blocks others.

        The offset chosen is the first in `offsets` of those that cover least (when
        one covers nothing, that is the first that covers nothing). Offsets are tried
        lowest bound first, and trying stops when the next bound is over the least
        cost found: the rest cannot cover less.
        """
        frame = self.ax.get_window_extent(self.renderer)
        bounds = self._bounds(x, y, text, offsets, kw, frame)
        best = None  # (cost, index in offsets, annotation, its box)
        for i in sorted(range(len(offsets)), key=lambda k: (bounds[k], k)):
            if best is not None and (bounds[i] > best[0] * (1 + TIE) + TIE or best[0] == 0):
                break
            dx, dy = offsets[i]
            ha, va = _align(dx, dy)
            t = self.ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va, **kw)
            bb = t.get_window_extent(self.renderer).padded(2)
            cost = self._cost(bb, frame)
            if best is None or (cost, i) < best[:2]:
                if best is not None:
                    best[2].remove()
                best = (cost, i, t, bb)
            else:
                t.remove()
        t, bb = best[2], best[3]
        self._add(np.array([[bb.x0, bb.y0, bb.x1, bb.y1]]), self.HEAVY)
        return t


def _align(dx: float, dy: float) -> tuple[str, str]:
    """The text's alignment at an offset: away from the point it labels."""
    ha = "left" if dx > 0 else ("right" if dx < 0 else "center")
    return ha, "bottom" if dy > 0 else ("top" if dy < 0 else "center")


def _apart(p: tuple[float, float], box: list[float], gap: float) -> bool:
    """Whether point `p` is more than `gap` outside `box` (x0, y0, x1, y1)."""
    dx = max(box[0] - p[0], 0.0, p[0] - box[2])
    dy = max(box[1] - p[1], 0.0, p[1] - box[3])
    return bool(np.hypot(dx, dy) > gap)
