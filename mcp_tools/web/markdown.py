"""Markdown that strangers wrote (an issue's spec, a comment, a PR's description) as inert HTML for the pages.

markdown-it-py parses CommonMark with raw HTML off (`<script>`, `<img onerror=…>` are shown as text), and every
link passes `safe_link` first: only absolute http(s) and mailto URLs become links, so `javascript:`, `data:`,
`vbscript:`, `file:` and relative tricks stay plain text. No image is ever embedded: an image is a link to its
address (or its alt text when the address is refused), so opening a page makes no request to a host an
attacker chose (the pages' Content-Security-Policy allows no remote image either). Headings are moved down
two levels so a spec's own `#` sits under the page's headings. Links carry `rel="nofollow noopener noreferrer"`.
"""

from __future__ import annotations

import functools
from typing import Any

from markupsafe import Markup, escape

MAX_CHARS = 100_000  # GitHub caps an issue body at 65 536 characters; a longer text is cut, and says so
SAFE_SCHEMES = ("http://", "https://", "mailto:")
LINK_REL = "nofollow noopener noreferrer"


def safe_link(url: str) -> bool:
    """Only absolute web and mail addresses become links (after markdown-it normalised and percent-encoded them:
    no control character or space survives in a scheme)."""
    lowered = url.strip().lower()
    return lowered.startswith(SAFE_SCHEMES) and not any(c.isspace() or ord(c) < 32 for c in url)


@functools.cache
def _parser() -> Any:
    from markdown_it import MarkdownIt

    class SafeLinks(MarkdownIt):
        def validateLink(self, url: str) -> bool:  # markdown-it asks this of every link: a refused one stays text
            return safe_link(url)

    md = SafeLinks("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.add_render_rule("image", _image)
    md.add_render_rule("link_open", _link_open)
    return md


def _image(self: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    """An image as a link to its address (never fetched by the page), labelled with its alt text."""
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    src = str(token.attrGet("src") or "")
    label = escape(f"image: {alt}")
    if not safe_link(src):
        return str(label)
    return f'<a href="{escape(src)}" rel="{LINK_REL}" class="md-image">{label}</a>'


def _link_open(self: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    tokens[idx].attrSet("rel", LINK_REL)
    return str(self.renderToken(tokens, idx, options, env))


def render(text: str | None) -> Markup:
    """`text` (Markdown written by anyone) as HTML safe to place in a page."""
    source = (text or "")[:MAX_CHARS]
    md = _parser()
    env: dict[str, Any] = {}
    tokens = md.parse(source, env)
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1]) + 2)}"
    html = md.renderer.render(tokens, md.options, env)
    if text and len(text) > MAX_CHARS:
        html += f'<p class="meta">(cut at {MAX_CHARS:,} characters)</p>'
    return Markup(html)
