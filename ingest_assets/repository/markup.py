"""Wiki markup in template values -> clean text: ``''`` -> ``<i>``, ``'''`` -> ``<b>``, links -> labels.

Nested templates are flattened to the cleaned text of their parameters (parser functions such as
``{{#if:}}`` and magic words are dropped); comments, categories and file links are removed.
"""

from __future__ import annotations

import re

import mwparserfromhell
from mwparserfromhell import nodes

KEPT_TAGS = frozenset({"i", "b", "em", "strong", "sup", "sub", "code", "tt", "u", "s"})
DROPPED_LINK_PREFIXES = ("file:", "image:", "media:", "category:", "datei:", "bild:", "kategorie:")
_TEMPLATE_EDGE = "\x00"  # marks where a flattened template starts/ends, so neighbours get a "; "
_WS = re.compile(r"[ \t\r\f\v]+")
_BLANK_LINES = re.compile(r"\n\s*\n+")


def clean(value) -> str:
    """Clean a wikitext string or parsed Wikicode into text with ``<i>``/``<b>`` inline markup."""
    code = mwparserfromhell.parse(value) if isinstance(value, str) else value
    text = "".join(_render(node) for node in code.nodes)
    text = re.sub(f"{_TEMPLATE_EDGE}\\s*{_TEMPLATE_EDGE}", "; ", text).replace(_TEMPLATE_EDGE, "")
    text = _BLANK_LINES.sub("\n", _WS.sub(" ", text))
    return "\n".join(line.strip() for line in text.split("\n")).strip()


def _render(node) -> str:
    if isinstance(node, nodes.Text):
        return str(node.value)
    if isinstance(node, nodes.HTMLEntity):
        return node.normalize()
    if isinstance(node, nodes.Comment):
        return ""
    if isinstance(node, nodes.Wikilink):
        target = str(node.title).strip()
        if target.lstrip(":").lower().startswith(DROPPED_LINK_PREFIXES):
            return ""
        return clean(node.text) if node.text is not None else target.lstrip(":")
    if isinstance(node, nodes.ExternalLink):
        return clean(node.title) if node.title is not None else str(node.url)
    if isinstance(node, nodes.Heading):
        return clean(node.title)
    if isinstance(node, nodes.Template):
        flat = flatten_template(node)
        return f"{_TEMPLATE_EDGE}{flat}{_TEMPLATE_EDGE}" if flat else ""
    if isinstance(node, nodes.Argument):
        return clean(node.default) if node.default is not None else ""
    if isinstance(node, nodes.Tag):
        return _render_tag(node)
    return str(node)


def _render_tag(tag) -> str:
    name = str(tag.tag).strip().lower()
    if name == "br":
        return "\n"
    if name in ("ref", "references"):
        return ""
    inner = clean(tag.contents) if tag.contents is not None else ""
    if name == "nowiki":
        return str(tag.contents or "")
    if name in ("li", "dd", "dt", "p", "div", "tr", "table"):
        return f"\n{inner}\n"
    if tag.wiki_markup in ("''", "'''"):
        name = "i" if tag.wiki_markup == "''" else "b"
    if name in KEPT_TAGS and inner:
        return f"<{name}>{inner}</{name}>"
    return inner


def flatten_template(template) -> str:
    """A nested template as plain text: its cleaned parameter values joined by ``; ``."""
    name = str(template.name).strip()
    if name.startswith("#") or name.isupper():
        return ""
    values = [clean(param.value) for param in template.params]
    return "; ".join(value for value in values if value)
