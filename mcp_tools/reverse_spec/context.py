"""The model context of a target, assembled under a token budget.

Three parts: the skeleton (always), the specs already written for the modules the target imports
(dependency specs), and with `deep` the function bodies (snippets, secrets redacted). Tokens are
estimated as characters / 4 — no tokenizer runs offline, so the answer says it is an estimate. Above 80 %
of the budget a warning is given; above the budget parts are dropped in this order: snippets (last
first), then dependency specs (last first), then the skeleton's doc comments, then its members, then
whole files (last first). Everything dropped is listed: the first 20 pieces of a kind one by one, the rest
of that kind in one entry naming the first and last of them (they are contiguous: dropped last first).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from adapters.paths import PathRefused, ProjectPaths
from adapters.redact import redact
from domain.knowledge.skeleton import Export, MergedSkeleton
from domain.knowledge.skeleton_text import file_text
from domain.knowledge.spec_document import SpecFormatError, parse_front

DEFAULT_BUDGET = 100_000
WARN_RATIO = 0.8
ESTIMATE = "characters / 4 (an estimate; no tokenizer is run)"
CALLABLE = frozenset({"function", "method", "constructor", "macro", "modifier"})
MAX_DEP_SPEC_CHARS = 12_000
MAX_LISTED = 20  # dropped pieces of one kind listed one by one; the rest in one entry (a big tree drops thousands)


def estimate_tokens(text: str) -> int:
    return (len(text) + 3) // 4


@dataclass
class Piece:
    kind: str
    label: str
    text: str

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


@dataclass
class Context:
    text: str
    budget: int
    parts: dict[str, int]
    dropped: list[dict[str, object]] = field(default_factory=list)
    redactions: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    def answer(self) -> dict[str, object]:
        return {"text": self.text, "estimatedTokens": self.tokens, "tokenEstimate": ESTIMATE, "budget": self.budget,
                "usedRatio": round(self.tokens / self.budget, 4) if self.budget else 0.0, "parts": self.parts,
                "dropped": self.dropped, "redactions": dict(sorted(self.redactions.items())),
                "warnings": self.warnings}


def snippets(paths: ProjectPaths, merged: MergedSkeleton, redactions: Counter[str]) -> list[Piece]:
    """The bodies of the callable exports and members, secrets redacted (deep mode)."""
    pieces: list[Piece] = []
    for f in merged.files:
        try:
            lines = paths.read_bytes(f.path).decode("utf-8", errors="replace").splitlines()
        except PathRefused:
            continue

        def add(export: Export, owner: str = "", path: str = f.path, language: str = f.language,
                lines: list[str] = lines) -> None:
            body = "\n".join(lines[export.start_line - 1:export.end_line])
            cleaned = redact(body)
            redactions.update(cleaned.counts)
            label = f"{path}:{owner}{export.name} (lines {export.start_line}-{export.end_line})"
            pieces.append(Piece("snippet", label, f"#### {label}\n```{language}\n{cleaned.text}\n```"))

        for export in f.exports:
            if export.kind in CALLABLE:
                add(export)
            for member in export.members:
                if member.kind in CALLABLE:
                    add(member, owner=f"{export.name}.")
        if not f.exports and f.parse_errors:  # nothing parsed: the whole text stands in for the skeleton
            cleaned = redact("\n".join(lines))
            redactions.update(cleaned.counts)
            pieces.append(Piece("snippet", f"{f.path} (whole file)", f"#### {f.path}\n```{f.language}\n"
                                f"{cleaned.text}\n```"))
    return pieces


def dependency_specs(paths: ProjectPaths, merged: MergedSkeleton, specs_dir: str = "specs",
                     redactions: Counter[str] | None = None) -> list[Piece]:
    """Specs already written (reverse-spec `.spec.md` files) for the files the target imports from outside it,
    secrets redacted as a body's are (a spec is a file of the repository: it may quote a `ghp_…` token).

    The specs are found by the resolver's walk: a symlink under `specs/` is never followed (its target could
    be any file of the machine, whose text would then reach the model), nor is the state directory read."""
    inside = {f.path for f in merged.files}
    wanted = sorted({i.resolved for f in merged.files for i in f.imports if i.resolved and i.resolved not in inside})
    if not wanted:
        return []
    try:
        found = list(paths.walk(specs_dir, suffix=".spec.md"))
    except PathRefused:  # no specs directory, or one that leads out of the project
        return []
    owners: dict[str, str] = {}
    for spec in sorted(found):
        for related in _related_files(paths, spec):
            owners.setdefault(related, spec)
    pieces: list[Piece] = []
    for spec in dict.fromkeys(owners[w] for w in wanted if w in owners):
        try:
            text = paths.read_text(spec)
        except PathRefused:
            continue
        body = text.split("\n---\n", 1)[-1].split("\n## Diagrams", 1)[0].strip()
        if len(body) > MAX_DEP_SPEC_CHARS:
            body = body[:MAX_DEP_SPEC_CHARS] + "\n[… cut]"
        cleaned = redact(body)
        if redactions is not None:
            redactions.update(cleaned.counts)
        pieces.append(Piece("dependency-spec", spec, f"### {spec}\n{cleaned.text}"))
    return pieces


_RELATED: dict[str, tuple[int, int, tuple[str, ...]]] = {}  # spec path -> (mtime_ns, size, relatedFiles)


def _related_files(paths: ProjectPaths, spec: str) -> tuple[str, ...]:
    """A spec's `relatedFiles`, read once per version of the file (a batch asks for every module)."""
    try:
        real = paths.resolve(spec)
        stat = real.stat()
        hit = _RELATED.get(str(real))
        if hit is not None and hit[:2] == (stat.st_mtime_ns, stat.st_size):
            return hit[2]
        related = tuple(str(r) for r in parse_front(paths.read_text(spec)).get("relatedFiles") or [])
    except (OSError, PathRefused, SpecFormatError):
        return ()
    _RELATED[str(real)] = (stat.st_mtime_ns, stat.st_size, related)
    return related


def _skeleton_pieces(merged: MergedSkeleton, docs: bool, members: bool) -> list[Piece]:
    return [Piece("skeleton-file", f.path, file_text(f, docs=docs, members=members)) for f in merged.files]


def _render(target: str, skeleton: list[Piece], deps: list[Piece], bodies: list[Piece]) -> str:
    parts = [f"# Skeleton of {target}\n\n" + "\n\n".join(p.text for p in skeleton)]
    if deps:
        parts.append("# Specs of the modules it depends on\n\n" + "\n\n".join(p.text for p in deps))
    if bodies:
        parts.append("# Function bodies (secrets redacted)\n\n" + "\n\n".join(p.text for p in bodies))
    return "\n\n".join(parts) + "\n"


def assemble(target: str, merged: MergedSkeleton, *, deps: list[Piece] | None = None,
             bodies: list[Piece] | None = None, budget: int = DEFAULT_BUDGET,
             redactions: Counter[str] | None = None) -> Context:
    deps, bodies = list(deps or []), list(bodies or [])
    skeleton = _skeleton_pieces(merged, True, True)
    dropped: list[dict[str, object]] = []

    chars = len(_render(target, skeleton, deps, bodies))  # kept up to date as pieces go (linear, not quadratic)

    def size() -> int:
        return (chars + 3) // 4

    listed: Counter[str] = Counter()
    rest: dict[str, tuple[dict[str, object], str]] = {}  # kind -> (its entry past MAX_LISTED, the first label)

    def drop(pieces: list[Piece], kind: str) -> None:
        nonlocal chars
        piece = pieces.pop()
        chars -= len(piece.text) + 2  # the piece and its separator
        listed[kind] += 1
        if listed[kind] <= MAX_LISTED:
            dropped.append({"kind": kind, "label": piece.label, "estimatedTokens": piece.tokens})
            return
        if kind not in rest:
            rest[kind] = ({"kind": kind, "label": "", "estimatedTokens": 0}, piece.label)
            dropped.append(rest[kind][0])
        entry, first = rest[kind]
        tokens = entry["estimatedTokens"]
        entry["label"] = f"{listed[kind] - MAX_LISTED} more, dropped last first: from {first} back to {piece.label}"
        entry["estimatedTokens"] = (tokens if isinstance(tokens, int) else 0) + piece.tokens

    while size() > budget and bodies:
        drop(bodies, "snippet")
    while size() > budget and deps:
        drop(deps, "dependency-spec")
    for docs, members, kind in ((False, True, "skeleton-docs"), (False, False, "skeleton-members")):
        if size() <= budget:
            break
        before = sum(p.tokens for p in skeleton)
        skeleton = _skeleton_pieces(merged, docs, members)
        chars = len(_render(target, skeleton, deps, bodies))
        dropped.append({"kind": kind, "label": f"{kind.split('-')[1]} of every file",
                        "estimatedTokens": before - sum(p.tokens for p in skeleton)})
    while size() > budget and len(skeleton) > 1:
        drop(skeleton, "skeleton-file")
    text = _render(target, skeleton, deps, bodies)
    context = Context(text=text, budget=budget, dropped=dropped, redactions=redactions or Counter(),
                      parts={"skeleton": sum(p.tokens for p in skeleton),
                             "dependencySpecs": sum(p.tokens for p in deps),
                             "snippets": sum(p.tokens for p in bodies)})
    if dropped:
        context.warnings.append(f"context over the budget of {budget} estimated tokens: dropped {len(dropped)} "
                                "part(s) (see context.dropped)")
    if context.tokens > budget:
        context.warnings.append(f"context still {context.tokens} estimated tokens after trimming (budget {budget})")
    elif context.tokens > WARN_RATIO * budget:
        context.warnings.append(f"context uses {context.tokens} of {budget} estimated tokens "
                                f"({context.tokens / budget:.0%}, above {WARN_RATIO:.0%})")
    return context
