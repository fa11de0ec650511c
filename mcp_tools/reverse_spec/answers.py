"""What the reverse-spec tools answer (their output schemas). The seed gives the top-level names
(PrepareResult: skeletons, mergedSkeleton, context, filePaths; generate: specPath, tokenUsage, confidence,
warnings; BatchResult; DriftReport summary); the fields below them are ours, documented here.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict  # pydantic needs it for nested TypedDicts on Python < 3.12

STRICT = ConfigDict(extra="forbid")
Confidence = Literal["high", "medium", "low"]


@with_config(STRICT)
class DroppedPart(TypedDict):
    kind: str  # snippet | dependency-spec | skeleton-docs | skeleton-members | skeleton-file
    label: str
    estimatedTokens: int


@with_config(STRICT)
class ContextParts(TypedDict):
    skeleton: int
    dependencySpecs: int
    snippets: int


@with_config(STRICT)
class ContextAnswer(TypedDict):
    """The assembled model context. Token counts are estimates (characters / 4), not a tokenizer's."""

    text: str
    estimatedTokens: int
    tokenEstimate: str
    budget: int
    usedRatio: float
    parts: ContextParts
    dropped: list[DroppedPart]
    redactions: dict[str, int]
    warnings: list[str]


@with_config(STRICT)
class MergedSummary(TypedDict):
    root: str
    hash: str  # over the files' content hashes
    skeletonHash: str  # over the API surface
    files: int
    exports: int  # API exports: test files' are left out (domain/knowledge/module_scope.py), as from skeletonHash
    languages: dict[str, int]
    skipped: dict[str, int]
    internalImports: list[str]
    externalImports: list[str]


@with_config(STRICT)
class PrepareContinuation(TypedDict):
    """Beyond the seed: what the answer cap (CODE3_MAX_ANSWER_BYTES) left out of a prepare answer and where it
    starts: call prepare again with the same targetPath and deep and these offsets (no state is kept between
    calls; the pages belong together while mergedSkeleton.hash is the same)."""

    offset: int  # the first file left out of skeletons and filePaths
    contextOffset: int  # the first character left out of context.text
    omittedFiles: int
    omittedContextChars: int
    hint: str


@with_config(STRICT)
class PrepareAnswer(TypedDict):
    skeletons: list[dict[str, Any]]  # one FileSkeleton per file (domain/knowledge/skeleton.py), from `offset`
    mergedSkeleton: MergedSummary
    context: ContextAnswer  # its text from `contextOffset`
    filePaths: list[str]  # from `offset`
    continuation: NotRequired[PrepareContinuation]  # only when the cap cut this answer


@with_config(STRICT)
class TokenUsage(TypedDict):
    inputTokens: int
    outputTokens: int
    totalTokens: int
    estimated: bool  # true when no model was called (the offline writer): 0 tokens spent


@with_config(STRICT)
class GenerateAnswer(TypedDict):
    specPath: str
    tokenUsage: TokenUsage
    confidence: Confidence
    warnings: list[str]


@with_config(STRICT)
class ModuleFailure(TypedDict):
    module: str
    error: str


@with_config(STRICT)
class BatchContinuation(TypedDict):
    """Beyond the seed: the answer cap (CODE3_MAX_ANSWER_BYTES) cut the module lists; call batch again with
    the same projectRoot and this offset (that call runs nothing: it pages the last run's saved result)."""

    offset: int  # the first module (position in order) left out
    omittedModules: int
    hint: str


@with_config(STRICT)
class BatchAnswer(TypedDict):
    """BatchResult.

    totalModules: modules (directories holding source files) found; successful: modules whose spec was
    (re)generated this run; skipped: modules whose skeleton-hash key matched the checkpoint (unchanged, and
    nothing they depend on changed); failed: modules that could not be generated, with the seed's error text;
    degraded: modules whose spec is not a model's reading of a cleanly parsed module — written by the offline
    writer (no model configured), or of low confidence (no exports, or most files do not parse);
    degradedReasons (beyond the seed): module -> why it is degraded; staleSpecs (beyond the seed): specs in
    the specs directory whose module is gone (no source file left in it) or that a module's current spec
    replaced; pruned: the stale specs deleted (`prune`); order: the processing order
    (dependencies first); cycles: import cycles between modules (each a sorted list); brokenEdges: the
    dependency edges ignored to order a cycle ([from, to], deterministic: within a cycle modules go in name
    order); indexSpecPath: the architecture index; checkpointPath: where progress is kept (a re-run resumes);
    tokenUsage: summed over the modules generated; duration: seconds. A page (offset > 0, or an answer the
    cap cut) lists only the modules from its offset in each list; the counts and paths are the run's.
    """

    totalModules: int
    successful: list[str]
    skipped: list[str]
    failed: list[ModuleFailure]
    degraded: list[str]
    degradedReasons: dict[str, str]
    staleSpecs: list[str]
    pruned: list[str]
    order: list[str]
    cycles: list[list[str]]
    brokenEdges: list[list[str]]
    indexSpecPath: str
    indexGenerated: bool
    checkpointPath: str
    tokenUsage: TokenUsage
    duration: float
    continuation: NotRequired[BatchContinuation]  # only when the cap cut the module lists


@with_config(STRICT)
class DriftItemAnswer(TypedDict):
    severity: Literal["high", "medium", "low"]
    change: str  # removed | added | signature | kind | member-removed | member-added | member-changed | dependency
    path: str
    name: str
    before: str | None
    after: str | None


@with_config(STRICT)
class NoiseCounts(TypedDict):
    whitespace: int
    trailingCommas: int
    comments: int
    importOrder: int
    lineMoves: int
    bodyOnly: int


@with_config(STRICT)
class DriftSummary(TypedDict):
    totalChanges: int
    high: int
    medium: int
    low: int
    filteredNoise: NoiseCounts


@with_config(STRICT)
class DiffScope(TypedDict):
    """Beyond the seed: the files compared (domain/knowledge/module_scope.py). target: the module's path; directoryOnly:
    a batch module (the directory's own files, not its subdirectories'); otherModules: other specs' source
    targets below target, whose files are theirs; testsAsApi: test files counted (default: left out);
    include / exclude: the patterns given; leftOut: the current files left out, by reason (other module,
    subdirectory, test, excluded)."""

    target: str
    directoryOnly: bool
    otherModules: list[str]
    testsAsApi: bool
    include: list[str]
    exclude: list[str]
    leftOut: dict[str, int]


@with_config(STRICT)
class ParserVersions(TypedDict):
    """Beyond the seed: the parser version the baseline was recorded with (null: before versions were
    recorded), the current one, and how many unchanged files were re-derived with the current parser
    (only when the two differ)."""

    baseline: str | None
    current: str
    rederivedFiles: int


@with_config(STRICT)
class DiffAnswer(TypedDict):
    """DriftReport summary.

    hasDrift: any change beyond noise; summary: counts by severity (removed export = high; signature, kind or
    member change = medium; added export or changed dependency = low) and the noise filtered out, by kind;
    items: each change; recommendation: what to do next; baselineHash / currentHash: the API-surface
    skeleton hashes compared; accepted: true when this call rewrote the baseline (CLI `--accept` only).
    Beyond the seed: stale (the module is gone: its path no longer exists or holds none of its source
    files), scope, parserVersion, warnings.
    """

    specPath: str
    sourcePath: str
    hasDrift: bool
    summary: DriftSummary
    items: list[DriftItemAnswer]
    recommendation: str
    baselineHash: str
    currentHash: str
    accepted: bool
    stale: bool
    scope: DiffScope
    parserVersion: ParserVersions
    warnings: list[str]
