"""The web pages' Markdown renderer on a stranger's text: raw HTML, script and data links, remote images and event
handlers come out inert; ordinary Markdown still reads as Markdown. And the links the pages make of URLs from the
log: the embedded forge's open on this serve, the web's stay, anything else is text."""

from __future__ import annotations

import re

import pytest

from mcp_tools.web.forge_pages import page_href
from mcp_tools.web.markdown import MAX_CHARS, render


def tags(html: str) -> list[tuple[str, str]]:
    return [(t.lower(), a) for t, a in re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)\b([^>]*)>", html)]


def assert_inert(html: str) -> None:
    found = tags(html)
    assert not [t for t, _ in found if t in ("script", "img", "iframe", "object", "embed", "style", "svg", "form")]
    attributes = " ".join(a for _, a in found)
    assert not re.search(r"\son[a-z]+\s*=", attributes), attributes
    assert not re.search(r'(href|src)="\s*(javascript|data|vbscript|file):', attributes, re.I), attributes


@pytest.mark.parametrize("text", [
    "<script>alert(1)</script>",
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](java\tscript:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD4=)",
    "[x](vbscript:msgbox(1))",
    "[x](file:///etc/passwd)",
    "<javascript:alert(1)>",
    "![i](https://evil.example/x.png)",
    "![i](javascript:alert(1))",
    '<img src=x onerror="alert(1)">',
    "<iframe src=https://evil.example></iframe>",
    '<a href="javascript:alert(1)">x</a>',
    "[x]: javascript:alert(1)\n\n[link][x]",
    '<svg onload="alert(1)"></svg>',
    "```html\n<script>alert(1)</script>\n```",
])
def test_a_strangers_markdown_renders_inert(text: str) -> None:
    html = str(render(text))
    assert_inert(html)
    assert "<script" not in html and "<img" not in html


def test_raw_html_is_shown_as_text() -> None:
    html = str(render("<script>alert(1)</script> and <img src=x onerror=alert(1)>"))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_a_refused_link_stays_its_source_text() -> None:
    assert str(render("[x](javascript:alert(1))")) == "<p>[x](javascript:alert(1))</p>\n"


def test_a_remote_image_becomes_a_link_to_its_address_never_an_image() -> None:
    html = str(render("![the chart](https://evil.example/x.png)"))
    assert html == ('<p><a href="https://evil.example/x.png" rel="nofollow noopener noreferrer" class="md-image">'
                    "image: the chart</a></p>\n")


def test_ordinary_markdown_reads_as_markdown() -> None:
    html = str(render("# Spec\n\nSome **bold**, a [link](https://github.com/a/b) and `code`.\n\n- one\n- two\n\n"
                      "| a | b |\n|---|---|\n| 1 | 2 |"))
    assert "<h3>Spec</h3>" in html, "headings sit two levels under the page's"
    assert "<strong>bold</strong>" in html and "<code>code</code>" in html and "<li>one</li>" in html
    assert '<a href="https://github.com/a/b" rel="nofollow noopener noreferrer">link</a>' in html
    assert "<table>" in html and "<td>1</td>" in html


def test_a_huge_text_is_cut_and_says_so() -> None:
    html = str(render("a" * (MAX_CHARS + 10)))
    assert "cut at" in html and html.count("a") < MAX_CHARS + 100


def test_nothing_renders_to_nothing() -> None:
    assert str(render(None)) == "" and str(render("")) == ""


@pytest.mark.parametrize(("url", "href"), [
    ("local://forge/alice/todo-app/issues/3", "/forge/alice/todo-app/issues/3"),
    ("local://forge/alice/todo-app/pull/12", "/forge/alice/todo-app/pull/12"),
    ("https://github.com/acme/app/pull/7", "https://github.com/acme/app/pull/7"),
    ("javascript:alert(1)", None),
    ("data:text/html,x", None),
    ("local://forge/alice/todo-app/pull/12\n", None),
    ("local://forge/../../etc/issues/1", None),
    ("local://forge/alice/todo-app/tree/main", None),
    ("https://github.com/a b", None),
    ("", None),
    (None, None),
])
def test_a_url_from_the_log_becomes_a_link_only_when_it_opens(url: str | None, href: str | None) -> None:
    assert page_href(url) == href


@pytest.mark.parametrize(("title", "shown"), [
    ("[code3] 001-users-export-csv: Users can export their to-do list", "Users can export their to-do list"),
    ("[code3] 001-x: ", "[code3] 001-x: "),
    ("Fix the login page", "Fix the login page"),
    ("<b>[code3] 001-x: y</b>", "<b>[code3] 001-x: y</b>"),
])
def test_a_published_title_reads_without_the_publish_marker(title: str, shown: str) -> None:
    from mcp_tools.web.issues import display_title

    assert display_title(title) == shown
