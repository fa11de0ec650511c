"""`imports` relationships derived from the code: each source file's imports that resolve to another file
of the project (the code parser's skeletons, the same ones reverse-spec reads).

Derived relationships are recorded with `origin: derived`. They never replace a relationship that exists
(a person's, or the same derived one); a derived one whose import is gone from the code is removed, a
person's never is. Running it twice records nothing the second time.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from typing import Annotated, Any

from pydantic import Field

from adapters.paths import PathRefused, ProjectPaths
from domain.knowledge.file_meta import FileMeta
from domain.knowledge.skeleton import Import
from mcp_tools.codenexus.answers import DeriveAnswer, UnresolvedReasons
from mcp_tools.codenexus.arguments import PROFILES
from mcp_tools.codenexus.context import file_change, fresh, locate, project_paths, save
from mcp_tools.codenexus.errors import jsonrpc_errors
from mcp_tools.declare import tool
from mcp_tools.services import Services
from projections.knowledge import codenexus_queries as index

DERIVED = "derived from the code: {specifier}"
_DYNAMIC = re.compile(r"\$\{|[()+`\s]|^<.*>$")


def unresolved_reason(path: str, imported: Import) -> str:
    """Why an import that made no edge did not (see UnresolvedReasons in answers.py): from its text alone."""
    spec = imported.specifier.strip().strip("'\"")
    if imported.resolved is not None:
        return "refused"
    if not spec or _DYNAMIC.search(spec):
        return "dynamic"
    if not imported.relative:
        return "external"
    depth = len(posixpath.dirname(path).split("/")) if posixpath.dirname(path) else 0
    if spec.startswith(("./", "../", "/")) or spec in (".", ".."):
        climbs = posixpath.normpath(posixpath.join(posixpath.dirname(path) or ".", spec))
        return "outside_root" if spec.startswith("/") or climbs == ".." or climbs.startswith("../") else "not_found"
    dots = len(spec) - len(spec.lstrip("."))  # Python: `from ..x import y` climbs dots - 1 packages
    return "outside_root" if dots - 1 > depth else "not_found"


def _parser(s: Services) -> Any:
    parser = getattr(s, "parser", None)
    if parser is None:
        from adapters.code_parser.treesitter import TreeSitterCodeParser

        parser = TreeSitterCodeParser()
    return parser


def proposed_imports(s: Services, target: str) -> tuple[dict[str, dict[str, str]], int, Counter[str]]:
    """source path -> {target path: specifier}, files scanned, imports that did not resolve in the project
    by reason.

    An import the resolver refuses (a key, a secret, the state directory, `.git`, a symlink out) counts as
    unresolved: recording it would register that file and tell which keys and secrets exist."""
    paths = project_paths(s)
    merged = paths.run(_parser(s).scan, s.project, target)
    found: dict[str, dict[str, str]] = {}
    unresolved: Counter[str] = Counter()
    for skeleton in merged.files:
        for imported in skeleton.imports:
            if imported.resolved is None or not _recordable(paths, imported.resolved):
                unresolved[unresolved_reason(skeleton.path, imported)] += 1
            elif imported.resolved != skeleton.path:
                found.setdefault(skeleton.path, {}).setdefault(imported.resolved, imported.specifier)
        found.setdefault(skeleton.path, {})
    return found, len(merged.files), unresolved


def _recordable(paths: ProjectPaths, rel: str) -> bool:
    """A regular file the resolver accepts, named by its own path (not reached through a symlink)."""
    try:
        return paths.relative(paths.resolve(rel, kind="file")) == rel
    except PathRefused:
        return False


@tool("derive_relationships", profiles=PROFILES, idempotent=True, open_world=False)
@jsonrpc_errors
def derive_relationships(
        s: Services,
        path: Annotated[str, Field(description="Directory or file to scan, relative to the project root "
                                               "(default: the whole project)")] = ".",
) -> DeriveAnswer:
    """Derive `imports` relationships from the code's resolved imports (marked derived; a person's
    relationships are never overwritten)"""
    paths = project_paths(s)
    target = "." if path in (".", "") else paths.relative(paths.resolve(path, kind="any", must_exist=True))
    proposed, scanned, unresolved = proposed_imports(s, target)
    fresh(s)
    created = removed = kept = 0
    for source, targets in sorted(proposed.items()):
        row = index.file_by_path(s.views, source)
        existing = index.relationships(s.views, row.file_no, "out", 100_000)[0] if row else []
        manual = {r["target"] for r in existing if r["type"] == "imports" and r["origin"] == "manual"}
        derived = {r["target"] for r in existing if r["type"] == "imports" and r["origin"] == "derived"}
        kept += len(manual & set(targets))
        to_add = {t: spec for t, spec in targets.items() if t not in manual and t not in derived}
        to_drop = sorted(derived - set(targets))
        if not to_add and not to_drop:
            continue
        outcome = _apply(s, source, to_add, to_drop)
        created += outcome[0]
        removed += outcome[1]
    return {"success": True, "message": f"Derived imports from {scanned} files: {created} created, {removed} "
                                        f"removed, {kept} already recorded by a person",
            "files_scanned": scanned, "created": created, "removed": removed, "kept_manual": kept,
            "unresolved_imports": sum(unresolved.values()),
            "unresolved_by_reason": _by_reason(unresolved)}


def _by_reason(unresolved: Counter[str]) -> UnresolvedReasons:
    """Every reason, 0 for one that did not occur (the answer always names all five)."""
    return {"external": unresolved["external"], "not_found": unresolved["not_found"],
            "outside_root": unresolved["outside_root"], "dynamic": unresolved["dynamic"],
            "refused": unresolved["refused"]}


def _apply(s: Services, source: str, to_add: dict[str, str], to_drop: list[str]) -> tuple[int, int]:
    counts = [0, 0]

    def build() -> list[Any]:
        counts[:] = [0, 0]
        targets = {t: locate(s, t) for t in sorted({*to_add, *to_drop})}
        changes: list[Any] = []
        for t in sorted(to_add):
            changes.extend(file_change(s, targets[t], lambda meta: None, register=True))

        def mutate(meta: FileMeta) -> None:
            counts[:] = [0, 0]  # the store re-applies a change after a conflict: count the attempt that lands
            for t, spec in sorted(to_add.items()):
                counts[0] += meta.relate(str(targets[t].file_id), t, "imports", DERIVED.format(specifier=spec)[:500],
                                         origin="derived")
            for t in to_drop:
                counts[1] += meta.unrelate(str(targets[t].file_id), "imports", only_derived=True)

        changes.extend(file_change(s, locate(s, source), mutate))
        return changes

    save(s, build)
    return counts[0], counts[1]
