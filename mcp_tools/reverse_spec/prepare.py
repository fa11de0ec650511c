"""`prepare`: AST preprocessing and context assembly (the seed's PrepareResult), no model involved."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Annotated, cast

from pydantic import Field

from domain.knowledge.module_graph import api_hash
from domain.knowledge.module_scope import api_files
from domain.knowledge.skeleton import MergedSkeleton
from mcp_tools import answer_size
from mcp_tools.declare import tool
from mcp_tools.reverse_spec import context as ctx
from mcp_tools.reverse_spec.answers import MergedSummary, PrepareAnswer, PrepareContinuation
from mcp_tools.reverse_spec.common import PROFILE, failed, load_skeleton, paths_of, require_parsed, seed_errors
from mcp_tools.services import Services

TargetPath = Annotated[str, Field(description="目标文件或目录路径（绝对或相对于 cwd）")]
Deep = Annotated[bool, Field(description="深度分析模式（包含函数体）")]
Offset = Annotated[int, Field(ge=0, description="beyond the seed: the first file of the page (skeletons and "
                                                "filePaths), continuation.offset of the last page; 0 for the first")]
ContextOffset = Annotated[int, Field(ge=0, description="beyond the seed: the first character of context.text of the "
                                                       "page, continuation.contextOffset of the last page")]


def build_context(s: Services, rel: str, merged: MergedSkeleton, deep: bool,
                  budget: int = ctx.DEFAULT_BUDGET, redactions: Counter[str] | None = None) -> ctx.Context:
    redactions = redactions if redactions is not None else Counter()
    bodies = ctx.snippets(paths_of(s), merged, redactions) if deep else []
    deps = ctx.dependency_specs(paths_of(s), merged, redactions=redactions)
    return ctx.assemble(rel, merged, deps=deps, bodies=bodies, budget=budget, redactions=redactions)


def summary(merged: MergedSkeleton) -> MergedSummary:
    inside = {f.path for f in merged.files}
    return {
        "root": merged.root, "hash": merged.hash, "skeletonHash": api_hash(merged.files), "files": len(merged.files),
        "exports": sum(len(f.exports) for f in api_files(merged.files)),  # test files are not API
        "languages": dict(sorted(Counter(f.language for f in merged.files).items())),
        "skipped": dict(merged.skipped),
        "internalImports": sorted({i.resolved for f in merged.files for i in f.imports
                                   if i.resolved and i.resolved not in inside}),
        "externalImports": sorted({i.specifier for f in merged.files for i in f.imports
                                   if not i.resolved and not i.relative}),
    }


@seed_errors
def prepare_answer(s: Services, targetPath: str, deep: bool = False) -> PrepareAnswer:
    """The whole PrepareResult, uncut (the CLI prints it; the tool sends it a page at a time)."""
    redactions: Counter[str] = Counter()
    rel, merged = load_skeleton(s, targetPath, redactions)
    warnings: list[str] = []
    require_parsed(rel, merged, deep, warnings)
    context = build_context(s, rel, merged, deep, redactions=redactions)
    context.warnings[:0] = warnings
    return {"skeletons": [f.model_dump(mode="json") for f in merged.files], "mergedSkeleton": summary(merged),
            "context": context.answer(),  # type: ignore[typeddict-item]
            "filePaths": [f.path for f in merged.files]}


CONTINUE_HINT = ("the answer cap (CODE3_MAX_ANSWER_BYTES) cut this answer: call prepare again with the same "
                 "targetPath and deep, and offset and contextOffset from here, until no continuation is given; "
                 "the pages belong together while mergedSkeleton.hash stays the same")


def _fit(costs: Iterable[int], budget: int, first: bool = True) -> tuple[int, int]:
    """(how many leading items fit in `budget` bytes, the bytes they take with their separating commas)."""
    count = used = 0
    for each in costs:
        step = each + (0 if count == 0 and first else 2)
        if used + step > budget:
            break
        used += step
        count += 1
    return count, used


def page(full: PrepareAnswer, offset: int = 0, context_offset: int = 0) -> PrepareAnswer:
    """The part of `full` from file `offset` (skeletons and filePaths) and character `context_offset` of the
    context text that fits the answer cap, files and context text side by side; `continuation` says where the
    rest starts."""
    files, chars = len(full["filePaths"]), len(full["context"]["text"])
    skeletons, paths = full["skeletons"][offset:], full["filePaths"][offset:]
    text = full["context"]["text"][context_offset:]
    widest: PrepareContinuation = {"offset": files, "contextOffset": chars, "omittedFiles": files,
                                   "omittedContextChars": chars, "hint": CONTINUE_HINT}
    base = {**full, "skeletons": [], "filePaths": [], "context": {**full["context"], "text": ""},
            "continuation": widest}
    budget = answer_size.room(base)
    if budget < 0:
        raise answer_size.AnswerTooLarge(answer_size.limit() - budget, answer_size.limit(),
                                         "prepare a subdirectory: even without skeletons and context text the "
                                         "summary exceeds the cap")
    # while both remain, the files get up to half the room and the context text the rest, so every page carries
    # files (a big tree's context alone fills the cap); the files' costs are computed only as far as they fit
    costs = (answer_size.cost(k) + answer_size.cost(p) + 2 for k, p in zip(skeletons, paths, strict=True))
    kept, used = _fit(costs, budget // 2 if text else budget)
    kept_chars = answer_size.fit_text(text, budget - used)
    if kept_chars == len(text) and kept < len(paths):  # the whole text fitted: more files in what it left
        more = (answer_size.cost(k) + answer_size.cost(p) + 2 for k, p in zip(skeletons[kept:], paths[kept:],
                                                                             strict=True))
        extra, _ = _fit(more, budget - used - (answer_size.cost(text) - answer_size.cost("")) - (2 if kept else 0),
                        first=not kept)
        kept += extra
    answer: PrepareAnswer = {**full, "skeletons": skeletons[:kept], "filePaths": paths[:kept],
                             "context": {**full["context"], "text": text[:kept_chars]}}
    if kept < len(paths) or kept_chars < len(text):  # first: a reader of an answer cut short finds it
        rest: PrepareContinuation = {"offset": offset + kept, "contextOffset": context_offset + kept_chars,
                                     "omittedFiles": len(paths) - kept, "omittedContextChars": len(text) - kept_chars,
                                     "hint": CONTINUE_HINT}
        return cast(PrepareAnswer, answer_size.leading({"continuation": rest}, answer))
    return answer


@tool("prepare", profiles=PROFILE, read_only=True, open_world=False, error_text=failed("prepare"))
@seed_errors
def prepare(s: Services, targetPath: TargetPath, deep: Deep = False, offset: Offset = 0,
            contextOffset: ContextOffset = 0) -> PrepareAnswer:
    """AST 预处理 + 上下文组装

    The skeleton of a file or directory (exports, imports, parse errors per file), its merged summary, and
    the context a model would get, under a budget of 100 000 estimated tokens (what was trimmed is listed).
    An answer the answer cap cuts says in `continuation` where the rest starts (offset, contextOffset).
    """
    return page(prepare_answer(s, targetPath, deep), offset, contextOffset)
