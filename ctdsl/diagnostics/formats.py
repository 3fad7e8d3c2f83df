"""The five formats of a report, as `ctdsl check --format` and `ctdsl lint --format` name them."""

from __future__ import annotations

from enum import StrEnum


class Format(StrEnum):
    text = "text"
    concise = "concise"
    json = "json"
    sarif = "sarif"
    github = "github"


FORMATS = tuple(f.value for f in Format)
