"""Labels placed, not guessed: each label tries offsets around its point and takes the one that covers least.

A label's box must stay inside the plot and should overlap no label or mark
already placed; curves weigh a little, so a label moves off a curve when it can.
"""

from __future__ import annotations

import numpy as np

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
        b = self.boxes
        w = np.clip(np.minimum(b[:, 2], bb.x1) - np.maximum(b[:, 0], bb.x0), 0, None)
        h = np.clip(np.minimum(b[:, 3], bb.y1) - np.maximum(b[:, 1], bb.y0), 0, None)
        cost = float(np.sum(w * h * self.weights))
        inside = max(0.0, min(bb.x1, frame.x1) - max(bb.x0, frame.x0)) * max(0.0, min(bb.y1, frame.y1) - max(bb.y0, frame.y0))
        outside = bb.width * bb.height - inside
        return cost + outside * self.HEAVY * 10

    def place(self, x: float, y: float, text: str, offsets=OFFSETS, **kw):
        """Annotate (x, y) with `text` at the offset that covers least; the label then blocks others."""
        frame = self.ax.get_window_extent(self.renderer)
        best = None
        for dx, dy in offsets:
            t = self.ax.annotate(
                text,
                (x, y),
                xytext=(dx, dy),
                textcoords="offset points",
                ha="left" if dx > 0 else ("right" if dx < 0 else "center"),
                va="bottom" if dy > 0 else ("top" if dy < 0 else "center"),
                **kw,
            )
            bb = t.get_window_extent(self.renderer).padded(2)
            cost = self._cost(bb, frame)
            if best is None or cost < best[0]:
                if best is not None:
                    best[1].remove()
                best = (cost, t, bb)
            else:
                t.remove()
            if cost == 0:
                break
        _, t, bb = best
        self._add(np.array([[bb.x0, bb.y0, bb.x1, bb.y1]]), self.HEAVY)
        return t
