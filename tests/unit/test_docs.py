"""The README is read in ten minutes and docs/ holds the rest: every page is reachable from the README's "Where to
go next", every relative link of the README and docs/ resolves (to a file of the repository, and to a heading of it
when it names one), and no table row is too long to read (a long cell belongs in prose under a heading, or a
list)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
MAX_ROW = 300  # characters of one table row
README_MAX_LINES = 150
# The pages the issues name; later work writes there, and its tests walk them literally.
NAMED = {"github.md", "aptos.md", "security.md", "operations.md", "tools.md", "commands.md", "configuration.md",
         "design.md"}

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+).+?\1", re.DOTALL)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.MULTILINE)


def prose(text: str) -> str:
    """The text a reader sees as Markdown: fenced blocks and code spans blanked out (their `#` lines are no
    headings, their brackets no links)."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return CODE_SPAN.sub(lambda m: "`" + m.group(0).strip("`").replace("[", " ").replace("]", " ") + "`", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped but `-` and `_`, each space a `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: dict[str, int] = {}
    out = set()
    for _, title in HEADING.findall(prose(path.read_text(encoding="utf-8"))):
        base = slug(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title))
        n = found.get(base, 0)
        found[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[str]:
    return [target for target in LINK.findall(prose(path.read_text(encoding="utf-8")))
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target)]


def test_every_relative_link_resolves_to_a_file_and_a_heading() -> None:
    broken = []
    for page in PAGES:
        for target in links(page):
            where, _, anchor = target.partition("#")
            file = (page.parent / where).resolve() if where else page
            if not file.exists() or ROOT not in (file, *file.parents):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and (file.suffix != ".md" or anchor not in anchors(file)):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading in {file.relative_to(ROOT)})")
    assert not broken, "\n".join(broken)


def test_the_link_check_sees_headings_and_links_as_github_renders_them(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("# Over HTTP: `code3 serve`\n## Who can move money, and when\n## Tools\n## Tools\n"
                    "```sh\n# a comment, not a heading\n```\n[a](b.md#c) `[not](a-link.md)` [web](https://x.y/z)\n")
    assert anchors(page) == {"over-http-code3-serve", "who-can-move-money-and-when", "tools", "tools-1"}
    assert links(page) == ["b.md#c"]


def test_no_table_row_is_longer_than_a_reader_can_follow() -> None:
    long = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")  # the generated configuration table too: its meanings stay short
        long += [f"{page.relative_to(ROOT)}: {line[:60]}… ({len(line)} characters)"
                 for line in text.splitlines() if line.startswith("|") and len(line) > MAX_ROW]
    assert not long, "turn these cells into prose under a heading, or a list:\n" + "\n".join(long)


def test_the_readme_is_short_and_leads_to_every_page_of_docs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES, "the README is read in ten minutes: move the rest to docs/"
    section = readme[readme.index("\n## Where to go next\n"):]
    linked = {Path(target).name for target in LINK.findall(section) if target.startswith("docs/")}
    pages = {page.name for page in DOCS.glob("*.md")}
    assert pages >= NAMED, f"missing pages: {NAMED - pages}"
    assert linked == pages, f"pages the README does not lead to: {pages - linked}; links to no page: {linked - pages}"
