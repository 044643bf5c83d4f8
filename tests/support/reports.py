"""Reading the HTML reports as a browser would: a parser that records misnested tags,
elements, text and stylesheets (:func:`parse` fails on a document that does not close every
element), everything that would make a browser fetch something, and the inline SVG charts,
each parsed as XML and checked for what makes it accessible.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

NS = "{http://www.w3.org/2000/svg}"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
URL_ATTRS = {"src", "href", "xlink:href", "action", "formaction", "poster", "data", "srcset", "background"}


class Parsed(HTMLParser):
    """Tags, attributes, text and stylesheets of a document; ``errors`` lists misnested tags."""

    def __init__(self, document: str):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.styles: list[str] = []
        self.doctype: str | None = None
        self.feed(document)
        self.close()

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag != "wbr":  # a line-break opportunity inside a word, not a space
            self.text.append(" ")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        self.text.append(" ")

    def handle_endtag(self, tag: str) -> None:
        self.text.append(" ")
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
        else:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")

    def handle_data(self, data: str) -> None:
        (self.styles if self.stack and self.stack[-1] == "style" else self.text).append(data)

    @property
    def words(self) -> str:
        return " ".join("".join(self.text).split())

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.elements if tag == name]


def parse(document: str) -> Parsed:
    parsed = Parsed(document)
    assert parsed.errors == [] and parsed.stack == [], (parsed.errors, parsed.stack)
    return parsed


def external_references(parsed: Parsed) -> list[str]:
    """Everything that would make a browser fetch something: URL attributes that are not
    fragments, url() that is not a fragment, @import and web fonts, in attributes and styles."""
    found = []
    for tag, attrs in parsed.elements:
        for name, value in attrs.items():
            value = value or ""
            if name in URL_ATTRS and not value.startswith("#"):
                found.append(f"<{tag} {name}={value}>")
            found += re.findall(r"url\(\s*['\"]?\s*(?!#)[^)]*\)", value)
    for css in parsed.styles + [a.get("style") or "" for _, a in parsed.elements]:
        found += re.findall(r"url\(\s*['\"]?\s*(?!#)[^)]*\)|@import|@font-face", css)
    return found


def svgs(document: str) -> dict[str, ET.Element]:
    """Each inline SVG parsed on its own as XML, by its title."""
    charts = {}
    for text in re.findall(r"<svg\b.*?</svg>", document, re.S):
        root = ET.fromstring(text)
        charts[root.findtext(f"{NS}title")] = root
    return charts


def svg_text(root: ET.Element) -> list[str]:
    """The visible text of a chart: its <text> elements without their tooltip titles."""
    return [(t.text or "").strip() for t in root.iter(f"{NS}text")]


def check_svg(text: str, title: str) -> ET.Element:
    """``text`` parsed as an accessible chart: role img, fluid width, a title and a longer
    description first and referenced by aria-labelledby, no script, nothing fetched."""
    root = ET.fromstring(text)
    assert root.tag == f"{NS}svg" and root.get("role") == "img" and root.get("width") == "100%"
    assert root.get("viewBox", "").startswith("0 0 ")
    first = list(root)[:2]
    assert [e.tag for e in first] == [f"{NS}title", f"{NS}desc"] and first[0].text == title
    ids = {e.get("id") for e in root.iter() if e.get("id")}
    assert set(root.get("aria-labelledby", "").split()) <= ids
    assert first[1].text and len(first[1].text) > len(title)
    assert "<script" not in text and "http" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    return root
