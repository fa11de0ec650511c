"""A file's neighbourhood as a small SVG drawn on the server: the file in the middle, the files it relates to
around it, an arrow per direction, the relationship types on the edges, every neighbour a link to its page.

No script and no library: the page stays readable without JavaScript and prints as it shows. The drawing is
a picture of the relationship table printed beside it, so it is named and described for a screen reader
(`<title>`, `<desc>`) and each node's link carries the neighbour's full path as its accessible name.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup, escape

WIDTH, HEIGHT = 720, 380
CENTER_X, CENTER_Y = WIDTH / 2, HEIGHT / 2
RADIUS_X, RADIUS_Y = 255, 140
NODE_W, NODE_H = 190, 36
MAX_NODES = 12
MAX_LABEL = 19


@dataclass(frozen=True)
class Neighbour:
    path: str
    outgoing: tuple[str, ...]  # relationship types from the file to this neighbour
    incoming: tuple[str, ...]  # and from this neighbour to the file


def _short(path: str, limit: int = MAX_LABEL) -> str:
    """The file name (with its folder when it fits), shortened in the middle past `limit` characters."""
    name = path.rsplit("/", 1)[-1]
    parent = path.rsplit("/", 2)[-2] if path.count("/") >= 1 else ""
    shown = f"{parent}/{name}" if parent and len(parent) + len(name) + 1 <= limit else name
    if len(shown) > limit:
        keep = (limit - 1) // 2
        shown = f"{shown[:keep]}…{shown[-keep:]}"
    return shown


def _edge_end(x: float, y: float, toward_x: float, toward_y: float) -> tuple[float, float]:
    """Where the line from (x, y) toward a point leaves the node box centred on (x, y)."""
    dx, dy = toward_x - x, toward_y - y
    if dx == 0 and dy == 0:
        return x, y
    scale = min((NODE_W / 2 + 4) / abs(dx) if dx else math.inf, (NODE_H / 2 + 4) / abs(dy) if dy else math.inf)
    return x + dx * scale, y + dy * scale


def draw(path: str, neighbours: list[Neighbour], href: Callable[[str], str], total: int | None = None) -> Markup:
    """The SVG for `path` and up to MAX_NODES of `neighbours` (`total`: how many there are in all)."""
    shown = neighbours[:MAX_NODES]
    total = len(neighbours) if total is None else total
    more = f" {total - len(shown)} more are listed in the table below." if total > len(shown) else ""
    described = "; ".join(_sentence(path, n) for n in shown) or "no relationships"
    parts = [
        f'<svg class="graph" viewBox="0 0 {WIDTH} {HEIGHT}" role="group" aria-labelledby="graph-title graph-desc" '
        f'xmlns="http://www.w3.org/2000/svg">',
        f'<title id="graph-title">Relationships of {escape(path)}</title>',
        f'<desc id="graph-desc">{escape(described)}.{escape(more)}</desc>',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" class="arrow"/></marker></defs>',
    ]
    places = []
    for i, n in enumerate(shown):
        angle = -math.pi / 2 + 2 * math.pi * i / max(len(shown), 1)
        places.append((n, CENTER_X + RADIUS_X * math.cos(angle), CENTER_Y + RADIUS_Y * math.sin(angle)))
    for n, x, y in places:
        x1, y1 = _edge_end(CENTER_X, CENTER_Y, x, y)
        x2, y2 = _edge_end(x, y, CENTER_X, CENTER_Y)
        ends = (' marker-end="url(#arrow)"' if n.outgoing else "") + (
            ' marker-start="url(#arrow)"' if n.incoming else "")
        parts.append(f'<line class="edge" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"{ends}/>')
        label = ", ".join(dict.fromkeys((*n.outgoing, *n.incoming)))
        mx, my = (x1 + x2) / 2, (y1 + y2) / 2
        parts.append(f'<text class="edge-label" x="{mx:.1f}" y="{my - 4:.1f}" text-anchor="middle" '
                     f'aria-hidden="true">{escape(_short(label, 24))}</text>')
    parts.append(_node(path, CENTER_X, CENTER_Y, None, "node center"))
    for n, x, y in places:
        parts.append(_node(n.path, x, y, href(n.path), "node"))
    parts.append("</svg>")
    return Markup("".join(parts))


def _node(path: str, x: float, y: float, link: str | None, css: str) -> str:
    box = (f'<rect class="{css}" x="{x - NODE_W / 2:.1f}" y="{y - NODE_H / 2:.1f}" width="{NODE_W}" '
           f'height="{NODE_H}" rx="6"/>'
           f'<text class="node-label" x="{x:.1f}" y="{y + 5:.1f}" text-anchor="middle">{escape(_short(path))}</text>')
    if link is None:
        return f'<g aria-hidden="true">{box}</g>'
    return f'<a href="{escape(link)}" aria-label="{escape(path)}"><title>{escape(path)}</title>{box}</a>'


def _sentence(path: str, n: Neighbour) -> str:
    said = [f"{path} {kind} {n.path}" for kind in n.outgoing]
    said += [f"{n.path} {kind} {path}" for kind in n.incoming]
    return "; ".join(said)
