"""The skeleton of source code: per file its exports (the public API) and imports, merged per directory.

A skeleton is what reverse-spec works from: `prepare` shows it, `generate` embeds it as the spec's
baseline, `batch` skips modules whose API surface did not change, `diff` compares a baseline against the
current source. The parser that builds skeletons lives behind the `CodeParser` port in
`adapters/code_parser/`; this module holds only the model and its canonical hashes (no I/O).

Two hashes, for two questions:
- `MergedSkeleton.hash` / `merged_hash()`: did any *file* change? sha256 over the sorted (path, sha256)
  pairs of the files' contents.
- `skeleton_hash()`: did the *API surface* change? sha256 of the canonical JSON of the exports' names,
  kinds, normalised signatures and members (recursively), per path; line numbers, doc comments,
  imports and the order of declarations do not count. Incremental batch and drift checks key on it.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from domain.canonical import canonical_json, sha256_hex

# Kinds an export may have. Each language maps its own constructs onto these (documented per language in
# adapters/code_parser/); "other" is there so a parser never has to lie.
ExportKind = Literal[
    "function",
    "method",
    "constructor",
    "property",
    "field",
    "class",
    "interface",
    "protocol",
    "type",
    "enum",
    "enum_member",
    "struct",
    "union",
    "trait",
    "impl",
    "const",
    "variable",
    "module",
    "namespace",
    "macro",
    "contract",
    "library",
    "event",
    "modifier",
    "error",
    "object",
    "record",
    "extension",
    "mixin",
    "typeclass",
    "instance",
    "other",
]

# Why a file of a scanned directory was left out. Counts are per path pruned: a skipped directory
# (vendored, gitignored) counts once, however many files it holds.
SkipReason = Literal["gitignored", "vendored", "generated", "binary", "oversized", "unsupported", "unreadable"]


def normalize_signature(signature: str) -> str:
    """Whitespace collapsed to single spaces and trimmed (the form parsers store). `str.split()` splits on the
    characters `\\s` matches (every code point checked), three times faster than the substitution."""
    return " ".join(signature.split())


_SPACE_NEAR_PUNCT = re.compile(r"\s*([()\[\]{}<>,;:=|&*?])\s*")
_TRAILING_COMMA = re.compile(r",(?=[)\]}>])")
_PUNCT = operator.methodcaller("group", 1)


def surface_signature(signature: str) -> str:
    """The signature as the API-surface hash sees it: no whitespace around punctuation, no trailing commas.

    So a reformat (line breaks, spaces, a trailing comma added by a formatter) never counts as a change.
    """
    text = _SPACE_NEAR_PUNCT.sub(_PUNCT, normalize_signature(signature))  # a C-level callable: a "\1" template
    # is expanded in Python per match on 3.11 (a third of the API hash of a 2 700-file tree)
    return _TRAILING_COMMA.sub("", text)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Export(_Model):
    """One exported declaration. `members` holds a class's/struct's/interface's/trait's public members."""

    name: str
    kind: ExportKind
    signature: str = ""
    doc: str | None = None
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    members: list[Export] = Field(default_factory=list)

    def surface(self) -> dict[str, Any]:
        """What the API-surface hash covers: name, kind, signature and members (sorted), nothing else."""
        return {
            "name": self.name,
            "kind": self.kind,
            "signature": surface_signature(self.signature),
            "members": _sorted_surfaces(self.members),
        }


class Import(_Model):
    """One import: its text, whether it is relative, where it resolves inside the project, the names it binds."""

    specifier: str
    relative: bool = False
    # project-relative posix path of the imported file when it is inside the project; for imports that name a
    # package rather than a file (Java `pkg.*`) the package's directory; a Go package: one file of it
    resolved: str | None = None
    names: list[str] = Field(default_factory=list)
    line: int | None = None


class FileSkeleton(_Model):
    path: str  # project-relative, posix separators
    language: str
    lines: int = Field(ge=0)
    sha256: str
    exports: list[Export] = Field(default_factory=list)
    imports: list[Import] = Field(default_factory=list)
    parse_errors: list[str] = Field(default_factory=list)  # "line N: …", never an exception

    def surface(self) -> dict[str, Any]:
        return {"path": self.path, "exports": _sorted_surfaces(self.exports)}


class MergedSkeleton(_Model):
    root: str  # the scanned target, project-relative posix ("." for the project root)
    files: list[FileSkeleton] = Field(default_factory=list)
    hash: str = ""  # merged_hash(files)
    skipped: dict[str, int] = Field(default_factory=dict)  # SkipReason -> count

    def file(self, path: str) -> FileSkeleton | None:
        return next((f for f in self.files if f.path == path), None)

    @classmethod
    def build(cls, root: str, files: Iterable[FileSkeleton], skipped: dict[str, int] | None = None) -> MergedSkeleton:
        """Files sorted by path, the content hash computed."""
        ordered = sorted(files, key=lambda f: f.path)
        return cls(root=root, files=ordered, hash=merged_hash(ordered), skipped=dict(sorted((skipped or {}).items())))


def _sorted_surfaces(exports: Iterable[Export]) -> list[dict[str, Any]]:
    surfaces = [e.surface() for e in exports]
    return sorted(surfaces, key=canonical_json)


def merged_hash(files: Iterable[FileSkeleton]) -> str:
    """sha256 over the sorted (path, content sha256) pairs: changes whenever any file's bytes change."""
    pairs = sorted([f.path, f.sha256] for f in files)
    return sha256_hex(canonical_json(pairs))


def api_surface(skeleton: FileSkeleton | MergedSkeleton | Sequence[FileSkeleton]) -> list[dict[str, Any]]:
    """The canonical API surface: per file (sorted by path) its exports' names, kinds, signatures, members."""
    if isinstance(skeleton, MergedSkeleton):
        files: Sequence[FileSkeleton] = skeleton.files
    elif isinstance(skeleton, FileSkeleton):
        files = [skeleton]
    else:
        files = skeleton
    return [f.surface() for f in sorted(files, key=lambda f: f.path)]


def skeleton_hash(skeleton: FileSkeleton | MergedSkeleton | Sequence[FileSkeleton]) -> str:
    """sha256 of the API surface: unchanged by line moves, doc edits, import order, reformatting."""
    return sha256_hex(canonical_json(api_surface(skeleton)))
