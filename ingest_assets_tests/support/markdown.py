"""Links and heading anchors of Markdown pages as GitHub renders them (CommonMark + tables, parsed by
markdown-it-py), for the documentation's link check in ``test_docs.py``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

from markdown_it import MarkdownIt

_PARSER = MarkdownIt("commonmark").enable("table")
_NOT_IN_ANCHOR = re.compile(r"[^\w\- ]")  # GitHub keeps letters, digits, '_', '-' and spaces (then hyphens)


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading's text: lower case, punctuation dropped, each space a hyphen."""
    return _NOT_IN_ANCHOR.sub("", heading.lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a page; a repeated one gets ``-1``, ``-2``, ... as on GitHub."""
    tokens = _PARSER.parse(text)
    taken: dict[str, int] = {}  # anchor -> how many repeats of it were numbered (github-slugger's bookkeeping)
    for opening, inline in zip(tokens, tokens[1:]):
        if opening.type == "heading_open":
            slug = first = anchor("".join(c.content for c in inline.children or () if c.type in ("text", "code_inline")))
            while slug in taken:
                taken[first] += 1
                slug = f"{first}-{taken[first]}"
            taken[slug] = 0
    return set(taken)


def links(text: str) -> Iterator[str]:
    """The target of every link and image of a page (not those inside code)."""
    for token in _PARSER.parse(text):
        for child in token.children or ():
            if child.type in ("link_open", "image"):
                yield str(child.attrs["href" if child.type == "link_open" else "src"])


def broken_links(page: Path, root: Path) -> list[str]:
    """The relative links of ``page`` that do not resolve: the file (or folder) is missing or outside ``root``,
    or the anchor is not a heading of the Markdown file it names. Links with a scheme (https:, mailto:) are
    not followed."""
    broken = []
    for href in links(page.read_text(encoding="utf-8")):
        parts = urlsplit(href)
        if parts.scheme or parts.netloc:
            continue
        target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
        if not target.is_relative_to(root) or not target.exists():
            broken.append(f"{href}: no such file in the repository")
        elif parts.fragment and not (target.suffix == ".md" and target.is_file()
                                     and unquote(parts.fragment) in anchors(target.read_text(encoding="utf-8"))):
            broken.append(f"{href}: no heading with that anchor in {target.relative_to(root)}")
    return broken
