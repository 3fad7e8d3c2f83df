"""The blocks a report document is made of (`document.build` makes them; `document_html` and
`document_md` write them): paragraphs, bullets, code, images, exact forms, tables, sections."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Image:
    png: bytes
    alt: str
    width: int | None = None  # CSS pixels to show it at


@dataclass
class Math:
    latex: str
    # the same form as MathML, what the HTML shows (selectable, searchable text): made when the HTML asks for
    # it, since Markdown shows a picture instead (printing MathML of a long form takes a tenth of a second)
    make_mathml: Callable[[], str]

    @property
    def mathml(self) -> str:
        return self.make_mathml()


@dataclass
class Code:
    text: str
    lang: str = ""


@dataclass
class Para:
    text: str


@dataclass
class Bullets:
    items: list[str]


@dataclass
class Grid:
    """A table: header, rows of strings, cells to emphasise, notes under it."""

    title: str | None
    header: list[str]
    rows: list[list[str]]
    marked: set = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


@dataclass
class Section:
    title: str
    blocks: list = field(default_factory=list)
    level: int = 2
