"""`diff`: a spec's embedded baseline skeleton against the current source (no model), and accepting drift.

The comparison is scoped to the spec's module (domain/knowledge/module_scope.py): the source path minus the files of
the other modules below it (the `sourceTarget`s of the other specs beside this one — files added to them
since count as theirs, not as this module's additions), minus the subdirectories of a batch module
(`scope: directory`, or a spec listed by the batch index beside it), minus test files (not API unless
`testsAsApi`), narrowed by include/exclude patterns. Both sides go through the same scope.

A spec whose module is gone (its source path no longer exists, or holds no source file) is answered as
`stale`, with its exports as removed. A baseline recorded by another parser version (`parserVersion` in the
front matter; none for specs written before it was recorded) is re-derived for every file whose bytes are
unchanged (same sha256): the current parser's skeleton of the same bytes stands in for the old one, so only
files that really changed are compared, and a warning says so.

Accepting (CLI `code3 spec diff --accept`; the seed's tool schema has no such argument, so the MCP tool
stays read-only) rewrites the baseline, diagrams, inventory, `skeletonHash`, `parserVersion` and
`lastUpdated` in place — the nine sections' prose is kept byte for byte — and records a DriftAccepted event.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from functools import partial
from typing import Annotated, Any

from pydantic import Field

from adapters.event_store import Change
from adapters.paths import PathRefused, ProjectPaths
from domain.errors import Code, Code3Error
from domain.knowledge.drift import compare
from domain.knowledge.generated_spec import GeneratedSpec
from domain.knowledge.module_graph import api_hash
from domain.knowledge.module_scope import Scope, normal
from domain.knowledge.skeleton import MergedSkeleton
from domain.knowledge.spec_document import SpecDocument, SpecFormatError, parse, parse_front, replace_baseline
from mcp_tools.declare import tool
from mcp_tools.reverse_spec.answers import DiffAnswer
from mcp_tools.reverse_spec.common import (
    PROFILE,
    failed,
    load_skeleton,
    parser_version,
    paths_of,
    relative,
    resolve,
    seed_errors,
    who,
)
from mcp_tools.reverse_spec.generate import now_iso
from mcp_tools.services import Services

SpecPath = Annotated[str, Field(description="Spec 文件路径（.spec.md）")]
SourcePath = Annotated[str, Field(description="源代码文件或目录路径")]
Patterns = Annotated[list[str] | None, Field(description="beyond the seed: fnmatch patterns on project-relative "
                                                         "paths (`*` crosses `/`)", max_length=100)]
TestsAsApi = Annotated[bool, Field(description="beyond the seed: count test files (*_test.go, test_*.py, tests/, "
                                               "*.test.ts, …) as API; by default they are left out")]
STALE = ("the module is gone ({why}): delete the spec, or run `code3 spec batch --prune` (batch lists it in "
         "staleSpecs)")
_FRONTS: dict[str, tuple[int, int, dict[str, Any]]] = {}  # real path -> (mtime_ns, size, front matter)


def _head(paths: ProjectPaths, spec: str, limit: int = 1 << 20) -> str:
    """The start of a spec up to the end of its front matter (its baseline, often most of it, is not read)."""
    with paths.open_binary(spec) as fh:
        data = b""
        while len(data) < limit:
            chunk = fh.read(16384)
            data += chunk
            if not chunk or b"\n---\n" in data[3:]:
                break
    return data.decode("utf-8", errors="replace")


def _front(paths: ProjectPaths, spec: str) -> dict[str, Any]:
    """A spec's front matter, read once per version of the file (every diff reads its neighbours')."""
    try:
        real = paths.resolve(spec)
        stat = real.stat()
        hit = _FRONTS.get(str(real))
        if hit is not None and hit[:2] == (stat.st_mtime_ns, stat.st_size):
            return hit[2]
        front = parse_front(_head(paths, spec))
    except (OSError, PathRefused, SpecFormatError, UnicodeDecodeError):
        return {}
    if len(_FRONTS) > 100_000:
        _FRONTS.clear()
    _FRONTS[str(real)] = (stat.st_mtime_ns, stat.st_size, front)
    return front


def _specs_in(paths: ProjectPaths, folder: str) -> list[str]:
    """The `.spec.md` regular files directly in `folder` (never through a symlink)."""
    try:
        return paths.files_in(folder, suffix=".spec.md")
    except PathRefused:
        return []


def module_scope(paths: ProjectPaths, spec_rel: str, document: SpecDocument, target: str, *, tests: bool = False,
                 include: list[str] | None = None, exclude: list[str] | None = None) -> Scope:
    """The scope of the spec's module (see the module doc), from the specs beside it."""
    folder = posixpath.dirname(spec_rel) or "."
    others: list[str] = []
    listed_by_index = False
    for neighbour in _specs_in(paths, folder):
        if neighbour == spec_rel:
            continue
        front = _front(paths, neighbour)
        if front.get("type") == "architecture-index":
            related = [str(r) for r in front.get("relatedFiles") or []]
            listed_by_index = listed_by_index or spec_rel in related
        elif front.get("sourceTarget") not in (None, ""):
            others.append(str(front["sourceTarget"]))
    directory_only = document.front.get("scope") == "directory" or (
        "scope" not in document.front and listed_by_index
        and all(posixpath.dirname(f.path) == ("" if normal(target) == "." else normal(target))
                for f in document.baseline.files))
    return Scope.of(target, others, directory_only=directory_only, tests=tests, include=include or (),
                    exclude=exclude or ())


def _rederive(baseline: MergedSkeleton, current: MergedSkeleton) -> tuple[MergedSkeleton, int]:
    """The baseline with each file whose bytes did not change replaced by the current parser's skeleton."""
    now = {f.path: f for f in current.files}
    files, swapped = [], 0
    for f in baseline.files:
        same = now.get(f.path)
        if same is not None and same.sha256 == f.sha256:
            files.append(same)
            swapped += 1
        else:
            files.append(f)
    return MergedSkeleton.build(baseline.root, files, baseline.skipped), swapped


def check_drift(s: Services, spec_path: str, source_path: str, accept: bool = False, *, tests_as_api: bool = False,
                include: list[str] | None = None, exclude: list[str] | None = None) -> DiffAnswer:
    real = resolve(s, spec_path, kind="file")
    spec_rel = relative(s, real)
    paths = paths_of(s)
    try:
        text = paths.read_bytes(spec_rel).decode("utf-8")
        document = parse(text)
    except (SpecFormatError, UnicodeDecodeError) as exc:
        raise Code3Error(Code.VALIDATION, f"{spec_rel} 不是可比较的 spec: {exc}",
                         "pass a .spec.md written by generate or batch (it embeds the baseline skeleton)") from None
    warnings: list[str] = []
    stale_why = ""
    try:
        target, current = load_skeleton(s, source_path)
    except Code3Error as exc:  # the module's own directory is gone: the spec is stale, not the call wrong
        recorded = str(document.front.get("sourceTarget") or "")
        if exc.code != Code.NOT_FOUND or not recorded or normal(recorded) != normal(source_path):
            raise
        target, current = normal(recorded), MergedSkeleton.build(normal(recorded), [])
        stale_why = f"{target} does not exist"
    scope = module_scope(paths, spec_rel, document, target, tests=tests_as_api, include=include, exclude=exclude)
    left_out = Counter(r for f in current.files if (r := scope.reason_out(f.path)) is not None)
    current = MergedSkeleton.build(current.root, scope.files(current.files), current.skipped)
    baseline = MergedSkeleton.build(document.baseline.root, scope.files(document.baseline.files),
                                    document.baseline.skipped)
    if not stale_why and not current.files and baseline.files:
        stale_why = f"{target} holds none of its source files"
    version, recorded_version = parser_version(s), str(document.front.get("parserVersion") or "")
    rederived = 0
    if recorded_version != version:
        baseline, rederived = _rederive(baseline, current)
        changed = len(baseline.files) - rederived
        warnings.append(f"baseline from parser {recorded_version or '(not recorded)'}, current parser {version}: "
                        f"{rederived} unchanged file(s) re-derived with the current parser; {changed} changed or "
                        "removed file(s) compared across parser versions (an item there may come from the parser: "
                        "review, then accept with `code3 spec diff --accept`)")
    drift = compare(baseline, current)
    before, after = api_hash(baseline.files), api_hash(current.files)
    accepted = False
    if accept and stale_why:  # nothing to document any more: an empty baseline would hide that
        raise Code3Error(Code.PRECONDITION, f"{spec_rel} 的模块已不存在 (the module is gone: {stale_why}); nothing to "
                         "accept", "delete the spec, or run `code3 spec batch --prune` to delete stale specs")
    if accept and (drift.has_drift or before != after or baseline.hash != current.hash
                   or recorded_version != version):
        new_text = replace_baseline(text, current, {"skeletonHash": after, "lastUpdated": now_iso(),
                                                    "parserVersion": version})
        paths.write_text(spec_rel, new_text)
        accepted = True
        accepting = partial(GeneratedSpec.record_acceptance, who=who(s), from_hash=before, to_hash=after,
                            high=drift.count("high"), medium=drift.count("medium"), low=drift.count("low"))

        def adopted() -> GeneratedSpec:
            """A spec the log has not seen joins it as it stood before this diff, its drift then accepted."""
            spec = GeneratedSpec.adopt(spec_rel, source_target=str(document.front.get("sourceTarget", "")),
                                       skeleton_hash=before, model=str(document.front.get("model", "unknown")),
                                       version=document.version,
                                       confidence=str(document.front.get("confidence", "medium")))
            accepting(spec)
            return spec

        s.store.update_all(Change.step(GeneratedSpec, GeneratedSpec.create_id(spec_rel), accepting, create=adopted))
    return {"specPath": spec_rel, "sourcePath": source_path, "hasDrift": drift.has_drift,
            "summary": drift.summary(),  # type: ignore[typeddict-item]
            "items": [i.as_dict() for i in drift.items],  # type: ignore[misc]
            "recommendation": STALE.format(why=stale_why) if stale_why else drift.recommendation(),
            "baselineHash": before, "currentHash": after, "accepted": accepted, "stale": bool(stale_why),
            "scope": {"target": scope.target, "directoryOnly": scope.directory_only,
                      "otherModules": list(scope.others), "testsAsApi": scope.tests, "include": list(scope.include),
                      "exclude": list(scope.exclude), "leftOut": dict(sorted(left_out.items()))},
            "parserVersion": {"baseline": recorded_version or None, "current": version, "rederivedFiles": rederived},
            "warnings": warnings}


@tool("diff", profiles=PROFILE, read_only=True, open_world=False, error_text=failed("diff"))
@seed_errors
def diff(s: Services, specPath: SpecPath, sourcePath: SourcePath, include: Patterns = None,
         exclude: Patterns = None, testsAsApi: TestsAsApi = False) -> DiffAnswer:
    """Spec 漂移检测

    Compares the spec's embedded baseline skeleton with the current source, scoped to the spec's module (the
    files of other specs' modules below sourcePath and test files left out; see `scope`): a removed export
    is high, a signature, kind or member change medium, an addition low; whitespace, comments, trailing
    commas, import order and moved lines are filtered and counted. A module that is gone is `stale`. A
    baseline from another parser version is re-derived for unchanged files (see `parserVersion`). No model
    is called.
    """
    return check_drift(s, specPath, sourcePath, tests_as_api=testsAsApi, include=include, exclude=exclude)
