"""`batch`: a spec per module of a project, dependencies first, incremental, resumable, with an index spec.

Modules are directories of source files; their order and cycles come from the import graph
(domain/knowledge/module_graph.py). A module is skipped when its incremental key (its API-surface hash and its
dependencies' keys) equals the one in the checkpoint and its spec file exists, unless `force`. The
checkpoint (`.code3/reverse-spec/checkpoint.json`, written atomically after every module) is what lets an
interrupted batch resume where it stopped. Progress goes to a callback: `notifications/progress` over MCP
when the client sent a progress token, a rich progress bar on the CLI.

A batch module is a directory's own files (its spec says `scope: directory`; its subdirectories are modules
of their own). A spec in the specs directory whose module is gone (no source file left in its scope) is
listed in `staleSpecs`, and deleted with `prune`. A module is `degraded` when its spec is not a model's
reading of a cleanly parsed module: `degradedReasons` says which (the offline writer, parse errors, no
exports).
"""

from __future__ import annotations

import json
import posixpath
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from adapters.files import locked
from adapters.llm.port import LLMFailed
from adapters.paths import PathRefused
from adapters.private_files import private_dir, write_private
from domain.errors import Code, Code3Error
from domain.knowledge.module_graph import ModuleGraph, api_hash, build
from domain.knowledge.module_scope import api_files, below, normal
from domain.knowledge.skeleton import MergedSkeleton
from domain.knowledge.spec_document import SpecFormatError, parse_front, render_front
from mcp_tools import answer_size
from mcp_tools.declare import tool
from mcp_tools.reverse_spec.answers import BatchAnswer, BatchContinuation, ModuleFailure
from mcp_tools.reverse_spec.common import (
    PROFILE,
    failed,
    parser_of,
    paths_of,
    redacted,
    relative,
    resolve,
    seed_errors,
    spec_name,
)
from mcp_tools.reverse_spec.generate import Written, now_iso, previous_version, usage, write_spec
from mcp_tools.services import Services

ProjectRoot = Annotated[str, Field(description="项目根目录（默认为当前工作目录）")]
Force = Annotated[bool, Field(description="强制重新生成所有 spec")]
Progress = Callable[[int, int, str], None]
CHECKPOINT = Path(".code3") / "reverse-spec" / "checkpoint.json"
INDEX_NAME = "_index.spec.md"


class Checkpoint:
    """Per batch root: each module's key and spec path, and the index's key."""

    def __init__(self, project: Path, root: str) -> None:
        self.path = project / CHECKPOINT
        self.root = root
        try:
            self.data: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.data = {}
        self.data.setdefault("version", 1)
        self.state: dict[str, Any] = self.data.setdefault("roots", {}).setdefault(root, {"modules": {}})

    @property
    def modules(self) -> dict[str, dict[str, str]]:
        return self.state.setdefault("modules", {})

    def save(self) -> None:
        text = json.dumps(self.data, indent=1, sort_keys=True)
        write_private(self.path, text.encode("utf-8"))  # state: 0600 in a 0700 directory, whatever the umask


def render_index(root: str, graph: ModuleGraph, keys: dict[str, str], specs: dict[str, str], version: int,
                 surface: str) -> str:
    front = {"type": "architecture-index", "version": version, "sourceTarget": root,
             "relatedFiles": [specs[m] for m in graph.order if m in specs], "lastUpdated": now_iso(),
             "confidence": "high", "skeletonHash": surface, "model": "offline"}
    rows = ["| # | module | files | exports | depends on | spec |", "| --- | --- | --- | --- | --- | --- |"]
    for i, module in enumerate(graph.order, 1):
        files = graph.files[module]
        deps = ", ".join(f"`{d}`" for d in sorted(graph.deps[module])) or "—"
        spec = f"[{Path(specs[module]).name}]({Path(specs[module]).name})" if module in specs else "—"
        exports = sum(len(f.exports) for f in api_files(files))  # test files are not API
        rows.append(f"| {i} | `{module}` | {len(files)} | {exports} | {deps} | {spec} |")
    ids = {m: f"m{i}" for i, m in enumerate(graph.order)}
    mermaid = ["graph LR", *(f'    {ids[m]}["{m}"]' for m in graph.order)]
    mermaid.extend(f"    {ids[m]} --> {ids[d]}" for m in graph.order for d in sorted(graph.deps[m]))
    cycles = "\n".join(f"- {' ↔ '.join(f'`{m}`' for m in c)}" for c in graph.cycles) or "None."
    broken = "\n".join(f"- `{a}` → `{b}`" for a, b in graph.broken) or "None."
    return (f"{render_front(front)}# Architecture index: {root}\n\n"
            f"{len(graph.order)} module(s), in dependency order (leaves first).\n\n" + "\n".join(rows)
            + "\n\n## Module dependencies\n\n```mermaid\n" + "\n".join(mermaid) + "\n```\n\n"
            f"## Import cycles\n\n{cycles}\n\nEdges ignored to order the cycles (modules of a cycle go in name "
            f"order):\n\n{broken}\n\n<!-- batch-keys: {json.dumps(keys, sort_keys=True)} -->\n")


def degraded_reason(written: Written, merged: MergedSkeleton) -> str | None:
    """Why a module's spec is degraded, or None: the offline writer wrote it (no model: its prose is the
    skeleton restated), or its confidence is low (no exports, or files that do not parse)."""
    reasons = []
    if written.model == "offline":
        reasons.append("offline writer (no model configured)")
    broken = sum(1 for f in merged.files if f.parse_errors)
    if broken:
        reasons.append(f"{broken} of {len(merged.files)} file(s) do not parse cleanly")
    if not any(f.exports for f in merged.files):
        reasons.append("no exports found")
    if not reasons and written.confidence == "low":
        reasons.append("low confidence")
    return "; ".join(reasons) or None


def stale_specs(s: Services, root: str, merged: MergedSkeleton, known: set[str],
                current: dict[str, str]) -> list[str]:
    """The specs in `<root>/specs/` whose module is gone: no source file left in its scope (the directory's
    own files for a batch module — `scope: directory`, or one the checkpoint knew — else anything below its
    target), or a batch module's spec under a name it no longer has (`current`: module -> its spec, e.g. a
    hidden `.devcontainer.spec.md` of an older version). Specs of targets outside `root` are not judged; the
    index is not a module's."""
    paths = paths_of(s)
    folder = "specs" if root == "." else f"{root}/specs"
    try:
        found = paths.files_in(folder, suffix=".spec.md")
    except PathRefused:
        return []
    dirs = {posixpath.dirname(f.path) or "." for f in merged.files}
    stale = []
    for spec in found:
        try:
            front = parse_front(paths.read_text(spec))
        except (OSError, PathRefused, SpecFormatError, UnicodeDecodeError):
            continue
        target = str(front.get("sourceTarget") or "")
        if front.get("type") != "module-spec" or not target or not below(normal(target), root):
            continue
        target = normal(target)
        if front.get("scope") == "directory" or target in known:
            gone = target not in dirs or current.get(target, spec) != spec
        else:
            gone = not any(below(f.path, target) for f in merged.files)
        if gone:
            stale.append(spec)
    return stale


def prune_specs(s: Services, specs: list[str]) -> list[str]:
    """Delete the given stale specs (regular files only, through the resolver); the ones deleted."""
    pruned = []
    for spec in specs:
        try:
            real = paths_of(s).resolve(spec, kind="file")
            if real.is_symlink():
                continue
            real.unlink()
        except (OSError, PathRefused):
            continue
        pruned.append(spec)
    return pruned


def run_batch(s: Services, project_root: str | None = None, force: bool = False,
              progress: Progress | None = None, prune: bool = False) -> BatchAnswer:
    """One batch at a time per project (a lock beside the checkpoint): a second one waits, then finds the
    first one's work done."""
    real = resolve(s, project_root or ".", kind="dir")
    with locked(private_dir(s.project / CHECKPOINT.parent)):
        return _run_batch(s, real, force, progress, prune)


def _run_batch(s: Services, real: Path, force: bool, progress: Progress | None, prune: bool) -> BatchAnswer:
    started = time.monotonic()
    root = relative(s, real)
    paths = paths_of(s)
    merged = redacted(paths.run(parser_of(s).scan, s.project, root))
    graph = build(merged)
    checkpoint = Checkpoint(s.project, root)
    known = checkpoint.state.setdefault("surfaces", {})
    keys = graph.keys(known)
    for gone in set(known) - {f.path for f in merged.files}:
        del known[gone]
    out_dir = paths.resolve(f"{root}/specs", kind="dir", must_exist=False)  # refused before anything is written
    successful: list[str] = []
    skipped: list[str] = []
    degraded: list[str] = []
    reasons: dict[str, str] = {}
    failures: list[ModuleFailure] = []
    tokens = [0, 0]
    total = len(graph.order) + 1
    known_modules = set(checkpoint.modules)
    for done, module in enumerate(graph.order, 1):
        entry = checkpoint.modules.get(module)
        try:  # a name too long for the file system, a spec file that is a symlink out: this module fails
            spec_file = paths.resolve(f"{root}/specs/{spec_name(module)}", kind="file", must_exist=False)
        except PathRefused as exc:
            spec_file = None
            failures.append({"module": module, "error": exc.message})
            checkpoint.modules.pop(module, None)
        if spec_file is None:
            pass
        elif not force and entry and entry.get("key") == keys[module] and spec_file.is_file():
            skipped.append(module)
        else:
            try:
                module_skeleton = graph.skeleton(module)
                written = write_spec(s, module, module_skeleton, out_dir, scope="directory")
            except LLMFailed as exc:  # the model is down or rate-limited: every next module would fail too
                checkpoint.save()
                raise LLMFailed(exc.message, f"{len(successful)} module(s) done before it; run batch again to "
                                f"resume after {module!r}. {exc.hint}", exc.status) from None
            except Code3Error as exc:
                if exc.code == Code.PRECONDITION:  # e.g. 未检测到 ANTHROPIC_API_KEY: the same for every module
                    raise
                failures.append({"module": module, "error": exc.message})
                checkpoint.modules.pop(module, None)
            except OSError as exc:  # the file system refused this module's spec: its reason, not the full path
                failures.append({"module": module, "error": f"{spec_name(module)[:80]}: "
                                 f"{exc.strerror or type(exc).__name__}"})
                checkpoint.modules.pop(module, None)
            else:
                successful.append(module)
                why = degraded_reason(written, module_skeleton) if written.degraded else None
                if written.degraded:
                    degraded.append(module)
                    reasons[module] = why or "low confidence"
                tokens[0] += written.usage["inputTokens"]
                tokens[1] += written.usage["outputTokens"]
                checkpoint.modules[module] = {"key": keys[module], "specPath": written.spec_path}
                checkpoint.save()
        if progress is not None:
            progress(done, total, f"{module} ({done}/{len(graph.order)})")
    for gone in set(checkpoint.modules) - set(graph.order):
        del checkpoint.modules[gone]
    specs = {m: e["specPath"] for m, e in checkpoint.modules.items()}
    index_key = json.dumps(sorted(keys.items()))
    index_file = paths.resolve(f"{root}/specs/{INDEX_NAME}", kind="file", must_exist=False)
    index_generated = force or bool(successful) or checkpoint.state.get("index") != index_key \
        or not index_file.is_file()
    if index_generated:
        text = render_index(root, graph, keys, specs, previous_version(paths, index_file) + 1,
                            api_hash(merged.files))
        paths.write_text(relative(s, index_file), text)
        checkpoint.state["index"] = index_key
    checkpoint.save()
    stale = stale_specs(s, root, merged, known_modules, specs)
    pruned = prune_specs(s, stale) if prune else []
    if progress is not None:
        progress(total, total, "index")
    return {"totalModules": len(graph.order), "successful": successful, "skipped": skipped, "failed": failures,
            "degraded": degraded, "degradedReasons": reasons, "staleSpecs": stale, "pruned": pruned,
            "order": graph.order, "cycles": graph.cycles,
            "brokenEdges": [list(edge) for edge in graph.broken], "indexSpecPath": relative(s, index_file),
            "indexGenerated": index_generated, "checkpointPath": CHECKPOINT.as_posix(),
            "tokenUsage": usage(tokens[0], tokens[1], estimated=not tokens[0] and not tokens[1]),
            "duration": round(time.monotonic() - started, 3)}


RESULT = CHECKPOINT.parent / "batch-result.json"
CONTINUE_HINT = ("the answer cap (CODE3_MAX_ANSWER_BYTES) cut the module lists: call batch again with the same "
                 "projectRoot and offset from here, until no continuation is given; a call with an offset runs "
                 "nothing and pages the last run's result (kept in .code3/reverse-spec/batch-result.json)")


def page(full: BatchAnswer, offset: int = 0) -> BatchAnswer:
    """The part of `full` about the modules from position `offset` of its order that fits the answer cap:
    the module lists (order, successful, skipped, degraded, failed) and the cycles and ignored edges that
    start there; the counts and paths whole. `continuation` says where the rest starts."""
    order = full["order"]
    at = {m: i for i, m in enumerate(order)}
    charged = [0] * len(order)
    owner: list[tuple[str, int, Any]] = []  # (list, module position, item) for every listed item
    for key in ("order", "successful", "skipped", "degraded"):
        owner.extend((key, at[m], m) for m in full[key])
    owner.extend(("failed", at[f["module"]], f) for f in full["failed"])
    owner.extend(("degradedReasons", at[m], (m, r)) for m, r in full.get("degradedReasons", {}).items())
    owner.extend(("cycles", min(at[m] for m in c), c) for c in full["cycles"])
    owner.extend(("brokenEdges", at[e[0]], e) for e in full["brokenEdges"])
    for _, position, item in owner:
        charged[position] += answer_size.cost(item) + 2
    empty: dict[str, Any] = {key: [] for key in ("order", "successful", "skipped", "degraded", "failed", "cycles",
                                                  "brokenEdges")}
    empty["degradedReasons"] = {}
    widest: BatchContinuation = {"offset": len(order), "omittedModules": len(order), "hint": CONTINUE_HINT}
    budget = answer_size.room({**full, **empty, "continuation": widest})
    kept = answer_size.fit_items(charged[offset:], budget)
    if offset == 0 and kept == len(order):
        return full
    end = offset + kept
    answer: dict[str, Any] = {**full, **empty, "degradedReasons": {}}
    for key, position, item in owner:
        if offset <= position < end:
            if key == "degradedReasons":
                answer[key][item[0]] = item[1]
            else:
                answer[key].append(item)
    if end < len(order):  # first: a reader of an answer cut short finds it
        answer = answer_size.leading({"continuation": {"offset": end, "omittedModules": len(order) - end,
                                                       "hint": CONTINUE_HINT}}, answer)
    return answer  # type: ignore[return-value]


def last_result(s: Services, project_root: str) -> BatchAnswer:
    """The last batch run's whole result for this root (what a call with an offset pages)."""
    root = relative(s, resolve(s, project_root or ".", kind="dir"))
    try:
        saved = json.loads((s.project / RESULT).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        saved = None
    if not isinstance(saved, dict) or saved.get("root") != root:
        raise Code3Error(Code.PRECONDITION, f"no batch result of {root} to page: run batch first (offset 0)",
                         "its answer's continuation gives the offsets to page")
    return saved["result"]


@tool("batch", profiles=PROFILE, open_world=True, error_text=failed("batch"), progress=True)
@seed_errors
def batch(s: Services, projectRoot: ProjectRoot = ".", force: Force = False,
          prune: Annotated[bool, Field(description="beyond the seed: delete the stale specs (their module is gone) "
                                                   "listed in staleSpecs")] = False,
          offset: Annotated[int, Field(ge=0, description="beyond the seed: 0 runs the batch; a continuation.offset "
                                                         "runs nothing and answers the last run's module lists from "
                                                         "that module")] = 0,
          progress: Progress | None = None) -> BatchAnswer:
    """批量 Spec 生成

    A spec per module (directory) of the project, dependencies first, skipping modules whose API and
    dependencies did not change since the last run (unless force), resuming an interrupted run, and an
    architecture index (specs/_index.spec.md). Sends notifications/progress when given a progress token.
    A module that cannot be generated is listed in `failed`; when the model itself fails (no key, rate limit
    after retries) the batch stops with that error, and the next run resumes where it stopped. An answer the
    answer cap cuts says in `continuation` the offset of the rest.
    """
    if offset:
        return page(last_result(s, projectRoot), offset)
    result = run_batch(s, projectRoot, force, progress, prune)
    write_private(s.project / RESULT, json.dumps({"root": relative(s, resolve(s, projectRoot or ".", kind="dir")),
                                                  "result": result}, ensure_ascii=False).encode("utf-8"))
    return page(result)
