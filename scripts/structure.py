"""The shape of Code3's source: lines per layer and per module, the longest modules, import cycles between modules
(every import, at module level or inside a function), and imports of another module's private name.

    python scripts/structure.py [--top N]

Read-only and dependency-free (the standard library's `ast`), so anyone can run it before and after a change.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("domain", "adapters", "projections", "mcp_tools", "scheduler", "code3")


def modules() -> dict[str, Path]:
    found = {}
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def imports(path: Path, name: str, known: set[str]) -> tuple[set[str], list[str]]:
    """The project modules `path` imports, and the private names it takes from another module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    private: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found |= {m for m in _prefixes(alias.name) if m in known}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if target in known:
                    found.add(target)
                elif base in known:
                    found.add(base)
                    if alias.name.startswith("_") and not alias.name.startswith("__") and base != name:
                        private.append(f"{name} imports {base}.{alias.name}")
    found.discard(name)
    return found, private


def _prefixes(dotted: str) -> list[str]:
    parts = dotted.split(".")
    return [".".join(parts[: k + 1]) for k in range(len(parts))]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10_000)

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=12, help="how many of the longest modules to list")
    args = parser.parse_args()
    mods = modules()
    known = set(mods)
    graph: dict[str, set[str]] = {}
    private: list[str] = []
    lines: dict[str, int] = {}
    per_layer: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for name, path in mods.items():
        graph[name], taken = imports(path, name, known)
        private += taken
        lines[name] = len(path.read_text(encoding="utf-8").splitlines())
        per_layer[name.split(".")[0]][0] += 1
        per_layer[name.split(".")[0]][1] += lines[name]
    print(f"source: {sum(lines.values())} lines in {len(mods)} modules")
    for layer in LAYERS:
        files, count = per_layer[layer]
        print(f"  {layer:<12} {count:>6} lines in {files:>3} modules")
    over = sorted((n for n in lines if lines[n] > 300), key=lambda n: -lines[n])
    print(f"modules over 300 lines: {len(over)}")
    for name in sorted(lines, key=lambda n: -lines[n])[: args.top]:
        print(f"  {lines[name]:>5}  {name}")
    found = cycles(graph)
    print(f"import cycles: {len(found)}")
    for component in found:
        print("  " + " <-> ".join(component))
    print(f"imports of another module's private name: {len(private)}")
    for line in sorted(private):
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
