"""The seed's prompts, filled from the CodeNexus index with real numbers."""

from __future__ import annotations

from collections import Counter
from typing import Any

from domain.knowledge.file_meta import MetaRefused
from mcp_tools.codenexus.context import fresh, known_path
from mcp_tools.codenexus.errors import jsonrpc_errors
from mcp_tools.codenexus.resources import file_relationships
from mcp_tools.dialects import FILE_NOT_FOUND, nexus_error
from mcp_tools.services import Services
from projections.knowledge import codenexus_queries as index

NONE = "（无）"
TOP = 10

ANALYZE = """分析文件 {file_path} 的关系和依赖：

基于以下元数据：
- 标签：{tags}
- 注释：{comment}
- 出向关系：{outgoing_relationships}
- 入向关系：{incoming_relationships}

请分析：
1. 该文件在项目中的作用和重要性
2. 与其他文件的依赖关系
3. 修改该文件可能的影响范围
4. 相关文件的建议查看顺序"""

REFACTOR = """基于代码库关系分析，为 {scope} 范围提供重构建议：

当前状态分析：
- 文件数量：{file_count}
- 关系复杂度：{relationship_complexity}
- 标签分布：{tag_distribution}

重构建议：
1. 识别高耦合模块
2. 建议模块拆分方案
3. 优化依赖关系
4. 改进代码组织结构"""


def _links(items: list[dict[str, Any]], key: str, total: int) -> str:
    if not items:
        return NONE
    shown = "; ".join(f"{r[key]} ({r['type']}{': ' + r['description'] if r['description'] else ''})" for r in items)
    return shown + (f"; … and {total - len(items)} more" if total > len(items) else "")


@jsonrpc_errors
def analyze_file_relationships(s: Services, file_path: object) -> str:
    rel = file_relationships(s, file_path)
    row = index.file_by_path(s.views, rel["file_path"])
    counts = rel["relationship_count"]
    return ANALYZE.format(
        file_path=rel["file_path"], tags=", ".join(row.tags) if row and row.tags else NONE,
        comment=row.comment if row and row.comment else NONE,
        outgoing_relationships=_links(rel["outgoing_relationships"], "target", counts["outgoing"]),
        incoming_relationships=_links(rel["incoming_relationships"], "source", counts["incoming"]))


def _scope(s: Services, scope: object) -> tuple[str, str | None, str]:
    """(label, path prefix or None for the whole project, kind: project | module | file)."""
    if not isinstance(scope, str) or not scope.strip() or len(scope) > 1024:
        raise MetaRefused("scope must be file, module or project, or a path", "e.g. project, src/api or src/main.rs")
    text = scope.strip()
    word, _, rest = text.partition(":")
    if word in ("project", "module", "file") and not rest.strip():
        return text, None, word
    target = rest.strip() if word in ("module", "file") and rest.strip() else text
    path = known_path(s, target)
    if (s.project / path).is_file() or index.file_by_path(s.views, path) is not None:
        return f"file {path}", path, "file"
    if (s.project / path).is_dir():
        return f"module {path}", path, "module"
    raise nexus_error(FILE_NOT_FOUND, f"{path!r} is neither a file nor a directory of the project")


def _module(path: str) -> str:
    return path.split("/", 1)[0] if "/" in path else "."


@jsonrpc_errors
def suggest_refactoring(s: Services, scope: object) -> str:
    fresh(s)
    label, prefix, kind = _scope(s, scope)
    stats = index.scope_stats(s.views, prefix)
    files, rels, paths = stats["files"], stats["relationships"], stats["paths"]
    inside = sum(1 for a, b, _ in rels if a in files and b in files)
    types = Counter(k for _, _, k in rels)
    per_file = len(rels) / len(files) if files else 0.0
    parts = [f"{len(rels)} relationships ({inside} inside the scope, {len(rels) - inside} crossing its boundary), "
             f"{per_file:.2f} per file"]
    if types:
        parts.append("types: " + ", ".join(f"{k} {n}" for k, n in types.most_common()))
    fan_in = sorted(stats["fan_in"].items(), key=lambda kv: (-kv[1], paths.get(kv[0], "")))[:5]
    fan_out = sorted(stats["fan_out"].items(), key=lambda kv: (-kv[1], paths.get(kv[0], "")))[:5]
    if fan_in:
        parts.append("most depended on: " + ", ".join(f"{paths.get(n, n)} ({c})" for n, c in fan_in))
    if fan_out:
        parts.append("most dependent: " + ", ".join(f"{paths.get(n, n)} ({c})" for n, c in fan_out))
    if kind == "module" and prefix is None:
        cross = Counter((_module(paths.get(a, "")), _module(paths.get(b, ""))) for a, b, _ in rels
                        if _module(paths.get(a, "")) != _module(paths.get(b, "")))
        if cross:
            parts.append("cross-module links: " + ", ".join(f"{a} → {b} ({n})" for (a, b), n in cross.most_common(TOP)))
    tags = Counter(stats["tags"])
    distribution = ", ".join(f"{t}: {n}" for t, n in tags.most_common(TOP)) or NONE
    if len(tags) > TOP:
        distribution += f" (and {len(tags) - TOP} more tags)"
    return REFACTOR.format(scope=label, file_count=len(files), relationship_complexity="; ".join(parts),
                           tag_distribution=distribution)

