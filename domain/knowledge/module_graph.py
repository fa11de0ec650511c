"""Modules (directories of source files), their import graph, cycles, and a deterministic processing order.

A module depends on another when one of its files imports a file of the other (the skeletons' resolved
imports). The order is leaves first: Tarjan's algorithm yields strongly connected components with every
component after the ones it depends on. A component of several modules is an import cycle: it is
reported, and broken deterministically by processing its modules in name order, ignoring each edge from
a module to one later in that order (those edges are reported as broken).

Each module gets an incremental key: the sha256 of its own API-surface hash and the keys of the modules
it depends on (the API hash, for an edge that a cycle broke). A module whose key is unchanged since the
last run needs no new spec; a changed leaf changes the keys of everything that depends on it, and only those.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from domain.canonical import canonical_json, sha256_hex
from domain.knowledge.module_scope import api_files, is_test_file
from domain.knowledge.skeleton import FileSkeleton, MergedSkeleton, skeleton_hash

_FILE_SURFACES: dict[tuple[str, str], str] = {}  # (path, content sha256) -> the file's API-surface hash


def file_surface(f: FileSkeleton) -> str:
    """`skeleton_hash` of one file, computed once per content (a file's surface follows from its bytes)."""
    key = (f.path, f.sha256)
    found = _FILE_SURFACES.get(key)
    if found is None:
        if len(_FILE_SURFACES) > 200_000:
            _FILE_SURFACES.clear()
        found = _FILE_SURFACES[key] = skeleton_hash(f)
    return found


def api_hash(files: Iterable[FileSkeleton]) -> str:
    """The API-surface hash of a set of files (what reverse-spec records as `skeletonHash`): sha256 over the
    sorted (path, file surface hash) pairs, so unchanged files cost nothing to hash again. Test files are not
    API (domain/knowledge/module_scope.py): a changed test changes no hash."""
    return sha256_hex(canonical_json(sorted([f.path, file_surface(f)] for f in api_files(files))))


def module_of(path: str) -> str:
    return posixpath.dirname(path) or "."


@dataclass
class ModuleGraph:
    files: dict[str, list[FileSkeleton]]
    deps: dict[str, set[str]]
    order: list[str] = field(default_factory=list)
    cycles: list[list[str]] = field(default_factory=list)
    broken: list[tuple[str, str]] = field(default_factory=list)

    def skeleton(self, module: str) -> MergedSkeleton:
        return MergedSkeleton.build(module, self.files[module])

    def dependants(self, module: str) -> set[str]:
        return {m for m, ds in self.deps.items() if module in ds}

    def surface(self, module: str, known: dict[str, list[str]] | None = None) -> str:
        """The module's API-surface hash, from its files' surface hashes. `known` (path -> [content sha256,
        surface hash]) spares recomputing a file whose content did not change; it is updated."""
        known = known if known is not None else {}
        parts = []
        for f in self.files[module]:
            if is_test_file(f.path):  # not API: a changed test regenerates no spec
                continue
            hit = known.get(f.path)
            if hit is None or hit[0] != f.sha256:
                hit = known[f.path] = [f.sha256, file_surface(f)]
            parts.append([f.path, hit[1]])
        return sha256_hex(canonical_json(sorted(parts)))

    def keys(self, known: dict[str, list[str]] | None = None) -> dict[str, str]:
        """The incremental key of every module (see the module doc); `known` as for `surface`."""
        known = known if known is not None else {}
        position = {m: i for i, m in enumerate(self.order)}
        surfaces = {m: self.surface(m, known) for m in self.order}
        keys: dict[str, str] = {}
        for module in self.order:
            parts = []
            for dep in sorted(self.deps[module]):
                if position[dep] < position[module]:
                    parts.append([dep, keys[dep]])
                else:  # a broken cycle edge: the dependency comes later, use its own surface
                    parts.append([dep, surfaces[dep]])
            keys[module] = sha256_hex(canonical_json([module, surfaces[module], parts]))
        return keys


def build(merged: MergedSkeleton) -> ModuleGraph:
    files: dict[str, list[FileSkeleton]] = defaultdict(list)
    for f in merged.files:
        files[module_of(f.path)].append(f)
    owner = {f.path: module_of(f.path) for f in merged.files}
    deps: dict[str, set[str]] = {m: set() for m in files}
    for f in merged.files:
        for imp in f.imports:
            target = owner.get(imp.resolved or "")
            if target is not None and target != owner[f.path]:
                deps[owner[f.path]].add(target)
    graph = ModuleGraph(dict(sorted(files.items())), deps)
    for component in strongly_connected(deps):
        members = sorted(component)
        if len(members) > 1:
            graph.cycles.append(members)
            rank = {m: i for i, m in enumerate(members)}
            graph.broken.extend((a, b) for a in members for b in sorted(deps[a])
                                if b in rank and rank[b] > rank[a])
        graph.order.extend(members)
    return graph


def strongly_connected(deps: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's SCCs, iteratively, visiting nodes and edges in name order: dependencies come out first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for root in sorted(deps):
        if root in index:
            continue
        work = [(root, iter(sorted(deps[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(deps[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                result.append(component)
    return result
