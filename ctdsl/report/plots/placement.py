"""Labels placed, not guessed: each label tries offsets around its point and takes the one that covers least.

A label's box must stay inside the plot and should overlap no label or mark
already placed; curves weigh a little, so a label moves off a curve when it can.
What a label covers is its text with its box, and its arrow as a line (samples
every ARROW_STEP px along it, not the rectangle around it: a long diagonal
arrow's rectangle covers much that the line does not, and labels far from their
point could never be chosen). The arrow's last MARK_CLEAR px end on the label's
own mark, by design, and are not counted.

Trying an offset means making the annotation and measuring it (most of the time
of a report's figure went there). So each offset's cost is first bounded from
below, cheaply: the annotation's box holds its text's box (measured once per
alignment, then moved to the offset), and an arrow only adds to the cost. An
offset whose bound is over the best cost found so far cannot win, and is not
tried: the choice is the one that trying every offset makes.
"""

from __future__ import annotations

import numpy as np

SLACK = 0.01  # display px the bound's text box is shrunk by, against rounding in where the text lands
ARROW_STEP = 3.0  # display px between the samples of an arrow's line
ARROW_HALF = 1.0  # display px: each sample is a box this far either side of the line
MARK_CLEAR = 10.0  # display px around the labelled point where its arrow is not counted (it ends on its own mark)
TIE = 1e-9  # relative: a bound this near the least cost is tried (the two sum in different orders)

# offsets to try, in points from the labelled point, nearest first
OFFSETS = [
    (10, 10), (10, -10), (-10, 10), (-10, -10),
    (16, 28), (16, -28), (-16, 28), (-16, -28),
    (0, 42), (0, -42), (34, 0), (-34, 0),
    (30, 56), (30, -56), (-30, 56), (-30, -56),
    (0, 72), (0, -72), (60, 30), (-60, 30), (60, -30), (-60, -30),
]  # fmt: skip
# farther, for a label that finds no free spot near its point (where curves and other labels crowd it):
# up and to the sides, where a plot of times that fall with the swept param has room
FAR = [
    (0, 100), (45, 100), (-45, 100), (90, 70), (-90, 70),
    (0, 135), (70, 135), (-70, 135), (120, 110), (-120, 110), (0, -100),
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

    def _bounds(self, x: float, y: float, text: str, offsets, kw: dict, frame) -> list[float]:
        """For each offset, a cost no larger than the annotation's there (see the module's doc)."""
        px, py = self.ax.transData.transform((x, y))
        if not self.ax.contains_point((px, py)):
            return [-np.inf] * len(offsets)  # matplotlib measures such an annotation as a unit box: no bound
        scale = self.ax.figure.dpi / 72.0  # "offset points"
        text_box = self._measure(text, kw)  # anchored at its lower left corner
        w, h = text_box[2] - text_box[0], text_box[3] - text_box[1]
        boxes = []
        for dx, dy in offsets:
            ha, va = _align(dx, dy)
            # the alignment moves the box by none, half or all of its size (matplotlib's text layout)
            ox = px + dx * scale - {"left": 0.0, "center": w / 2, "right": w}[ha]
            oy = py + dy * scale - {"bottom": 0.0, "center": h / 2, "top": h}[va]
            x0, y0 = ox + text_box[0] + SLACK, oy + text_box[1] + SLACK
            x1, y1 = ox + text_box[2] - SLACK, oy + text_box[3] - SLACK
            boxes.append((x0 - 2.0, y0 - 2.0, x1 + 2.0, y1 + 2.0))
        return self._box_costs(np.array(boxes), frame).tolist()

    def _box_costs(self, c: np.ndarray, frame) -> np.ndarray:
        """The weight each box (rows x0, y0, x1, y1) covers; its area outside the frame, ten times the heaviest."""
        b, weights = self.boxes, self.weights
        # only the obstacles that meet the rectangle around all the boxes can meet one of them
        near = (b[:, 0] < c[:, 2].max()) & (b[:, 2] > c[:, 0].min()) & (b[:, 1] < c[:, 3].max()) & (b[:, 3] > c[:, 1].min())
        b, weights = b[near], weights[near]
        w = np.clip(np.minimum(b[None, :, 2], c[:, None, 2]) - np.maximum(b[None, :, 0], c[:, None, 0]), 0, None)
        h = np.clip(np.minimum(b[None, :, 3], c[:, None, 3]) - np.maximum(b[None, :, 1], c[:, None, 1]), 0, None)
        cost = (w * h) @ weights
        iw = np.clip(np.minimum(c[:, 2], frame.x1) - np.maximum(c[:, 0], frame.x0), 0, None)
        ih = np.clip(np.minimum(c[:, 3], frame.y1) - np.maximum(c[:, 1], frame.y0), 0, None)
        outside = (c[:, 2] - c[:, 0]) * (c[:, 3] - c[:, 1]) - iw * ih
        return cost + outside * self.HEAVY * 10

    def _measure(self, text: str, kw: dict) -> tuple:
        """The text's box, aligned left and bottom at (0, 0)."""
        from matplotlib.text import Text
        from matplotlib.transforms import IdentityTransform

        props = {k: v for k, v in kw.items() if k not in ("arrowprops", "zorder", "bbox")}
        probe = Text(0.0, 0.0, text, ha="left", va="bottom", transform=IdentityTransform(), **props)
        probe.set_figure(self.ax.figure)
        bb = probe.get_window_extent(self.renderer)
        return (bb.x0, bb.y0, bb.x1, bb.y1)

    def covers(self, t, point: tuple[float, float]) -> np.ndarray:
        """What annotation `t` of `point` (display px) covers, as boxes: its text with its box, padded 2 px,
        then samples of its arrow's line outside that box and away from the point.

        The arrow is the line matplotlib draws for an `arrowstyle` (its `relpos` at the default, the
        text's centre) from the text's centre to the point, cut where it leaves the label's box; the
        box is the rounded patch's, to within its corners' rounding.
        """
        from matplotlib.text import Text
        from matplotlib.transforms import Bbox

        t.update_positions(self.renderer)
        text = Text.get_window_extent(t, self.renderer)  # the text alone (an Annotation's own adds the arrow)
        bb = text
        patch = t.get_bbox_patch()
        if patch is not None:
            t.update_bbox_position_size(self.renderer)  # where it is drawn (matplotlib does this only in draw)
            bb = Bbox.union([text, patch.get_window_extent(self.renderer)])
        x0, y0, x1, y1 = bb.x0 - 2.0, bb.y0 - 2.0, bb.x1 + 2.0, bb.y1 + 2.0
        boxes = np.array([[x0, y0, x1, y1]])
        arrow = getattr(t, "arrow_patch", None)
        if arrow is None or not arrow.get_visible():
            return boxes
        (cx, cy), (px, py) = ((text.x0 + text.x1) / 2, (text.y0 + text.y1) / 2), point
        n = max(1, int(np.hypot(px - cx, py - cy) // ARROW_STEP))
        f = np.linspace(0.0, 1.0, n + 1)
        sx, sy = cx + f * (px - cx), cy + f * (py - cy)
        keep = ~((sx >= x0) & (sx <= x1) & (sy >= y0) & (sy <= y1))  # inside the label's own box: counted there
        keep &= np.maximum(np.abs(sx - px), np.abs(sy - py)) > MARK_CLEAR  # on its own mark, by design
        sx, sy = sx[keep], sy[keep]
        line = np.column_stack([sx - ARROW_HALF, sy - ARROW_HALF, sx + ARROW_HALF, sy + ARROW_HALF])
        return np.vstack([boxes, line])

    def cost_of(self, t, point: tuple[float, float], frame) -> float:
        """What annotation `t` of `point` covers, weighed; outside the frame, ten times the heaviest."""
        return float(self._box_costs(self.covers(t, point), frame).sum())

    def place(self, x: float, y: float, text: str, offsets=OFFSETS, **kw):
        """Annotate (x, y) with `text` at the offset that covers least; the label then blocks others.

        The offset chosen is the first in `offsets` of those that cover least (when
        one covers nothing, that is the first that covers nothing). Offsets are tried
        lowest bound first, and trying stops when the next bound is over the least
        cost found: the rest cannot cover less.
        """
        frame = self.ax.get_window_extent(self.renderer)
        bounds = self._bounds(x, y, text, offsets, kw, frame)
        point = tuple(self.ax.transData.transform((x, y)))
        best = None  # (cost, index in offsets, annotation)
        for i in sorted(range(len(offsets)), key=lambda k: (bounds[k], k)):
            if best is not None and (bounds[i] > best[0] * (1 + TIE) + TIE or best[0] == 0):
                break
            dx, dy = offsets[i]
            ha, va = _align(dx, dy)
            t = self.ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va, **kw)
            cost = self.cost_of(t, point, frame)
            if best is None or (cost, i) < best[:2]:
                if best is not None:
                    best[2].remove()
                best = (cost, i, t)
            else:
                t.remove()
        t = best[2]
        self._add(self.covers(t, point), self.HEAVY)
        return t


def _align(dx: float, dy: float) -> tuple[str, str]:
    """The text's alignment at an offset: away from the point it labels."""
    ha = "left" if dx > 0 else ("right" if dx < 0 else "center")
    return ha, "bottom" if dy > 0 else ("top" if dy < 0 else "center")
