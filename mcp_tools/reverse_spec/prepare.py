"""`prepare`: AST preprocessing and context assembly (the seed's PrepareResult), no model involved."""

from __future__ import annotations

from collections import Counter
from typing import Annotated

from pydantic import Field

from domain.module_graph import api_hash
from domain.skeleton import MergedSkeleton
from mcp_tools.declare import tool
from mcp_tools.reverse_spec import context as ctx
from mcp_tools.reverse_spec.answers import MergedSummary, PrepareAnswer
from mcp_tools.reverse_spec.common import PROFILE, failed, load_skeleton, paths_of, require_parsed, seed_errors
from mcp_tools.services import Services

TargetPath = Annotated[str, Field(description="目标文件或目录路径（绝对或相对于 cwd）")]
Deep = Annotated[bool, Field(description="深度分析模式（包含函数体）")]


def build_context(s: Services, rel: str, merged: MergedSkeleton, deep: bool,
                  budget: int = ctx.DEFAULT_BUDGET, redactions: Counter[str] | None = None) -> ctx.Context:
    redactions = redactions if redactions is not None else Counter()
    bodies = ctx.snippets(paths_of(s), merged, redactions) if deep else []
    deps = ctx.dependency_specs(paths_of(s), merged)
    return ctx.assemble(rel, merged, deps=deps, bodies=bodies, budget=budget, redactions=redactions)


def summary(merged: MergedSkeleton) -> MergedSummary:
    inside = {f.path for f in merged.files}
    return {
        "root": merged.root, "hash": merged.hash, "skeletonHash": api_hash(merged.files), "files": len(merged.files),
        "exports": sum(len(f.exports) for f in merged.files),
        "languages": dict(sorted(Counter(f.language for f in merged.files).items())),
        "skipped": dict(merged.skipped),
        "internalImports": sorted({i.resolved for f in merged.files for i in f.imports
                                   if i.resolved and i.resolved not in inside}),
        "externalImports": sorted({i.specifier for f in merged.files for i in f.imports
                                   if not i.resolved and not i.relative}),
    }


@tool("prepare", profiles=PROFILE, read_only=True, open_world=False, error_text=failed("prepare"))
@seed_errors
def prepare(s: Services, targetPath: TargetPath, deep: Deep = False) -> PrepareAnswer:
    """AST 预处理 + 上下文组装

    The skeleton of a file or directory (exports, imports, parse errors per file), its merged summary, and
    the context a model would get, under a budget of 100 000 estimated tokens (what was trimmed is listed).
    """
    redactions: Counter[str] = Counter()
    rel, merged = load_skeleton(s, targetPath, redactions)
    warnings: list[str] = []
    require_parsed(rel, merged, deep, warnings)
    context = build_context(s, rel, merged, deep, redactions=redactions)
    context.warnings[:0] = warnings
    return {"skeletons": [f.model_dump(mode="json") for f in merged.files], "mergedSkeleton": summary(merged),
            "context": context.answer(),  # type: ignore[typeddict-item]
            "filePaths": [f.path for f in merged.files]}
