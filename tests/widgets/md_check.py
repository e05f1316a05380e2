"""What a CommonMark renderer makes of saved Markdown: the raw HTML elements that survive.

JupyterLab renders a ``text/markdown`` output with raw HTML allowed (then sanitises it);
markdown-it-py with ``html=True`` does what a permissive viewer does. A saved part is safe
when the rendered HTML has no element the model chose: no ``<img>``/``<script>``/
``<iframe>``..., no ``on*`` event-handler attribute, no ``javascript:`` URL.
"""

from __future__ import annotations

from html.parser import HTMLParser

from markdown_it import MarkdownIt

ALLOWED_TAGS = frozenset(
    [
        "details",
        "summary",
        "p",
        "a",
        "em",
        "strong",
        "code",
        "pre",
        "ul",
        "ol",
        "li",
        "blockquote",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "br",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "del",
        "s",
        "span",
        "div",
    ]
)
"""Elements our own saved Markdown (or CommonMark itself) produces."""


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.bad: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            self.bad.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.bad.append(f"<{tag} {name}>")
            if value and value.strip().lower().startswith(("javascript:", "data:text")):
                self.bad.append(f"<{tag} {name}={value}>")


def raw_html_problems(markdown: str) -> list[str]:
    """The model-chosen elements and attributes in `markdown` rendered by markdown-it-py
    (CommonMark, raw HTML allowed, tables on): empty when the Markdown is safe."""
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    collect = _Collect()
    collect.feed(md.render(markdown))
    collect.close()
    return collect.bad
