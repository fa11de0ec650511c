"""Drift between a spec's baseline skeleton and the current source: classified changes, noise counted.

Severity (as the original reverse-spec grades it):
- high: an export was removed (callers break; the spec documents something that is gone);
- medium: an export's signature, kind or members changed;
- low: an export was added, or a file's dependencies (resolved imports) changed.

Noise is filtered and counted, never reported as drift: whitespace and line breaks inside a signature,
trailing commas, doc-comment edits, import reordering, declarations that only moved (line numbers), and
files whose bytes changed without any change to their skeleton (bodies, comments, formatting).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from domain.knowledge.skeleton import Export, FileSkeleton, MergedSkeleton, normalize_signature, surface_signature

Severity = Literal["high", "medium", "low"]
_TRAILING_COMMA = re.compile(r",(\s*[)\]}>])")
NOISE_KINDS = ("whitespace", "trailingCommas", "comments", "importOrder", "lineMoves", "bodyOnly")


@dataclass(frozen=True)
class DriftItem:
    severity: Severity
    change: str  # removed | added | signature | kind | member-removed | member-added | member-changed | dependency
    path: str
    name: str
    before: str | None = None
    after: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"severity": self.severity, "change": self.change, "path": self.path, "name": self.name,
                "before": self.before, "after": self.after}


@dataclass
class Drift:
    items: list[DriftItem] = field(default_factory=list)
    noise: Counter[str] = field(default_factory=Counter)

    def count(self, severity: Severity) -> int:
        return sum(1 for i in self.items if i.severity == severity)

    @property
    def has_drift(self) -> bool:
        return bool(self.items)

    def recommendation(self) -> str:
        if self.count("high"):
            return ("regenerate the spec: exports it documents were removed "
                    "(code3 spec generate, or the generate tool)")
        if self.count("medium"):
            return ("review the Interface and Data structures sections and regenerate, or accept the drift "
                    "if the spec's prose still holds (code3 spec diff --accept)")
        if self.items:
            return "document the additions, or accept the drift (code3 spec diff --accept)"
        return "nothing to do: the spec matches the source"

    def summary(self) -> dict[str, Any]:
        return {"totalChanges": len(self.items), "high": self.count("high"), "medium": self.count("medium"),
                "low": self.count("low"), "filteredNoise": {k: self.noise.get(k, 0) for k in NOISE_KINDS}}


def _keyed(exports: Iterable[Export]) -> dict[tuple[str, int], Export]:
    """Exports keyed by (name, occurrence), so overloads pair up in order."""
    seen: Counter[str] = Counter()
    keyed = {}
    for export in exports:
        keyed[(export.name, seen[export.name])] = export
        seen[export.name] += 1
    return keyed


def _signature_noise(before: str, after: str, noise: Counter[str]) -> bool:
    """True when the two signatures differ only by noise (counted); False for a real change."""
    if before == after:
        return True
    if surface_signature(before) != surface_signature(after):
        return False
    if (_strip_trailing_commas(before) != before) != (_strip_trailing_commas(after) != after):
        noise["trailingCommas"] += 1
    if _strip_trailing_commas(before) != _strip_trailing_commas(after):
        noise["whitespace"] += 1
    return True


def _strip_trailing_commas(text: str) -> str:
    return _TRAILING_COMMA.sub(r"\1", text)


def _compare_exports(path: str, before: Export, after: Export, drift: Drift, prefix: str = "") -> None:
    name = f"{prefix}{before.name}"
    if before.kind != after.kind:
        drift.items.append(DriftItem("medium", "kind", path, name, before.kind, after.kind))
        return
    if not _signature_noise(before.signature, after.signature, drift.noise):
        drift.items.append(DriftItem("medium", "signature", path, name, normalize_signature(before.signature),
                                     normalize_signature(after.signature)))
    if (before.doc or "").strip() != (after.doc or "").strip():
        drift.noise["comments"] += 1
    if (before.start_line, before.end_line) != (after.start_line, after.end_line):
        drift.noise["lineMoves"] += 1
    old, new = _keyed(before.members), _keyed(after.members)
    for key, member in old.items():
        if key not in new:
            drift.items.append(DriftItem("medium", "member-removed", path, f"{name}.{member.name}",
                                         normalize_signature(member.signature), None))
        else:
            sub = Drift(noise=drift.noise)
            _compare_exports(path, member, new[key], sub, prefix=f"{name}.")
            for item in sub.items:  # any member change is a medium change of its owner
                drift.items.append(DriftItem("medium", "member-changed", item.path, item.name, item.before,
                                             item.after))
    for key, member in new.items():
        if key not in old:
            drift.items.append(DriftItem("medium", "member-added", path, f"{name}.{member.name}", None,
                                         normalize_signature(member.signature)))


def _compare_imports(before: FileSkeleton, after: FileSkeleton, drift: Drift) -> None:
    old = [(i.specifier, i.resolved, tuple(sorted(i.names))) for i in before.imports]
    new = [(i.specifier, i.resolved, tuple(sorted(i.names))) for i in after.imports]
    if old == new:
        return
    if Counter(old) == Counter(new):
        drift.noise["importOrder"] += 1
        return
    old_targets = {i.resolved or i.specifier for i in before.imports}
    new_targets = {i.resolved or i.specifier for i in after.imports}
    for target in sorted(old_targets - new_targets):
        drift.items.append(DriftItem("low", "dependency", before.path, target, target, None))
    for target in sorted(new_targets - old_targets):
        drift.items.append(DriftItem("low", "dependency", before.path, target, None, target))
    if old_targets == new_targets:
        drift.noise["importOrder"] += 1


def compare(baseline: MergedSkeleton, current: MergedSkeleton) -> Drift:
    """The drift from `baseline` to `current`, file by file (paths are project-relative)."""
    drift = Drift()
    old_files = {f.path: f for f in baseline.files}
    new_files = {f.path: f for f in current.files}
    for path in sorted(old_files.keys() | new_files.keys()):
        before, after = old_files.get(path), new_files.get(path)
        if after is None:
            assert before is not None
            drift.items.extend(DriftItem("high", "removed", path, e.name, normalize_signature(e.signature), None)
                               for e in before.exports)
            continue
        if before is None:
            drift.items.extend(DriftItem("low", "added", path, e.name, None, normalize_signature(e.signature))
                               for e in after.exports)
            continue
        found = len(drift.items)
        noise_before = sum(drift.noise.values())
        old, new = _keyed(before.exports), _keyed(after.exports)
        for key, export in old.items():
            if key in new:
                _compare_exports(path, export, new[key], drift)
            else:
                drift.items.append(DriftItem("high", "removed", path, export.name,
                                             normalize_signature(export.signature), None))
        for key, export in new.items():
            if key not in old:
                drift.items.append(DriftItem("low", "added", path, export.name, None,
                                             normalize_signature(export.signature)))
        _compare_imports(before, after, drift)
        if (len(drift.items) == found and sum(drift.noise.values()) == noise_before
                and before.sha256 != after.sha256):
            drift.noise["bodyOnly"] += 1
    order = {"high": 0, "medium": 1, "low": 2}
    drift.items.sort(key=lambda i: (order[i.severity], i.path, i.name, i.change))
    return drift
