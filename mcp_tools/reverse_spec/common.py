"""What the reverse-spec handlers share: the seed's error texts, path resolution, the parser, skeletons.

Errors are Code3 errors whose message is the seed's text ("目标路径不存在: src/x", "未检测到
ANTHROPIC_API_KEY", …); the MCP front prefixes the tool's name ("prepare 失败: …") through the
declaration's `error_text`. An unexpected exception becomes "内部错误: <message>" with the stack trace
logged on stderr only.
"""

from __future__ import annotations

import functools
import logging
import posixpath
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from adapters.code_parser.scan import MAX_BYTES as MAX_SOURCE_BYTES
from adapters.code_parser.scan import classify_content
from adapters.paths import PathRefused, ProjectPaths
from adapters.private_files import private_dir, private_file
from adapters.redact import redact
from domain.errors import Code, Code3Error
from domain.knowledge.skeleton import Export, MergedSkeleton
from mcp_tools.services import Services

log = logging.getLogger("code3.reverse_spec")
F = TypeVar("F", bound=Callable[..., Any])
PROFILE = ("reverse-spec",)
NOT_FOUND = "目标路径不存在: {path}"
PARSE_FAILED = "AST 解析失败，建议使用 --deep 模式"
CACHE_FILE = "skeletons.sqlite"


def failed(tool: str) -> Callable[[Any], str]:
    """The seed's error text of a tool: "<tool> 失败: <详情>"."""
    return lambda exc: f"{tool} 失败: {getattr(exc, 'message', str(exc))}"


def seed_errors(handler: F) -> F:
    """Unexpected exceptions as "内部错误: <message>" (secrets redacted), the trace on stderr only."""

    @functools.wraps(handler)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        except Code3Error:
            raise
        except Exception as exc:
            from mcp_tools.conflicts import write_conflict

            if (conflict := write_conflict(exc)) is not None:  # a lost write race: retry, not 内部错误
                raise conflict from None
            log.exception("%s raised an unexpected exception", handler.__name__)
            message = _relative_paths(args, redact(str(exc) or type(exc).__name__).text.splitlines()[0])[:500]
            raise Code3Error(Code.INTERNAL, f"内部错误: {message}",
                             "the server log (stderr) has the stack trace") from None

    return wrapper  # type: ignore[return-value]


def _relative_paths(args: tuple[Any, ...], message: str) -> str:
    """The message with the project's absolute path cut to a relative one: where a project lives on the
    server's disk is not the client's business (nor the model's)."""
    project = getattr(args[0], "project", None) if args else None
    if project is None:
        return message
    for root in dict.fromkeys((str(project), str(Path(project).resolve()))):
        message = message.replace(root + "/", "").replace(root, ".")
    return message


def paths_of(s: Services) -> ProjectPaths:
    paths = getattr(s, "paths", None)
    return paths if paths is not None else ProjectPaths(s.project)


def parser_of(s: Services) -> Any:
    """The services' code parser, or a tree-sitter one with its stat cache under .code3/ (made once)."""
    parser = getattr(s, "parser", None)
    if parser is None:
        from adapters.code_parser import SkeletonCache, TreeSitterCodeParser

        state = private_dir(s.project / ".code3")
        parser = TreeSitterCodeParser(cache=SkeletonCache(private_file(state / CACHE_FILE)))
        if hasattr(s, "parser"):
            s.parser = parser
    return parser


def parser_version(s: Services) -> str:
    """The version of the parser that makes this project's skeletons (recorded in a spec's front matter as
    `parserVersion`, so a parser upgrade is told apart from drift)."""
    own = getattr(parser_of(s), "version", None)
    if isinstance(own, str) and own:
        return own
    from adapters.code_parser.version import parser_version as tree_sitter_version

    return tree_sitter_version()


def resolve(s: Services, value: str, *, kind: str = "any", must_exist: bool = True) -> Path:
    """A path argument through the project's resolver; a missing one answers the seed's "目标路径不存在"."""
    try:
        return paths_of(s).resolve(value, kind=kind, must_exist=must_exist, allow_absolute=True)
    except PathRefused as exc:
        if exc.reason == "not_found":
            raise Code3Error(Code.NOT_FOUND, NOT_FOUND.format(path=value),
                             "pass a path inside the project (absolute, or relative to its root)") from None
        raise


def relative(s: Services, real: Path) -> str:
    rel = paths_of(s).relative(real)
    return "." if rel in ("", ".") else rel


def load_skeleton(s: Services, value: str, redactions: Counter[str] | None = None) -> tuple[str, MergedSkeleton]:
    """(project-relative target, its merged skeleton, secrets redacted) for a file or a directory argument."""
    real = resolve(s, value)
    rel = relative(s, real)
    parser = parser_of(s)
    paths = paths_of(s)
    if not real.is_file() and not real.is_dir():  # a FIFO, a socket, a device: nothing to parse, never opened
        raise PathRefused("not_regular", f"{rel!r} is not a regular file nor a directory",
                          "pass a source file or a directory")
    if real.is_file():
        check_single_file(s, rel, getattr(parser, "max_bytes", MAX_SOURCE_BYTES))
        try:
            skeleton = paths.run(parser.parse_file, s.project, rel)
        except ValueError:
            raise Code3Error(Code.VALIDATION, f"{PARSE_FAILED}: {rel}: 不支持的语言",
                             "pass a source file of a supported language, or its directory") from None
        return rel, redacted(MergedSkeleton.build(rel, [skeleton]), redactions)
    return rel, redacted(paths.run(parser.scan, s.project, rel), redactions)


def check_single_file(s: Services, rel: str, max_bytes: int) -> None:
    """The checks a directory scan makes of each file, made of a single file target: an oversized one is
    "too large", a binary one is said to be binary (neither is an "unsupported language")."""
    size = paths_of(s).resolve(rel).stat().st_size
    if size > max_bytes:
        raise Code3Error(Code.VALIDATION, f"{PARSE_FAILED}: {rel}: 文件过大 (too large: {size} bytes, the limit is "
                         f"{max_bytes})", "pass a smaller file, or its directory (where oversized files are "
                         "skipped and counted)")
    if classify_content(paths_of(s).read_bytes(rel)) == "binary":
        raise Code3Error(Code.VALIDATION, f"{PARSE_FAILED}: {rel}: 二进制文件 (a binary file, not source text)",
                         "pass a source file, or its directory (where binary files are skipped and counted)")


# (path, content sha256) -> the file's exports with secrets redacted (None: nothing to redact), and the counts
_REDACTED: dict[tuple[str, str], tuple[list[Export] | None, Counter[str]]] = {}


def redacted(merged: MergedSkeleton, counts: Counter[str] | None = None) -> MergedSkeleton:
    """The skeleton with secrets in signatures and doc comments redacted — a constant's value is part of its
    signature (`API_KEY = "sk-ant-…"`), and skeletons go into answers, model prompts and spec baselines.
    Every reverse-spec path reads skeletons through here, so baselines and current sources compare alike."""
    files = []
    for f in merged.files:
        key = (f.path, f.sha256)
        entry = _REDACTED.get(key)  # one lookup: a concurrent call may clear the cache between two
        if entry is None:
            if len(_REDACTED) > 200_000:
                _REDACTED.clear()
            found: Counter[str] = Counter()
            exports = [_redact_export(e, found) for e in f.exports]
            entry = _REDACTED[key] = (exports if found else None, found)
        exports_or_none, found = entry
        if counts is not None:
            counts.update(found)
        files.append(f if exports_or_none is None else f.model_copy(update={"exports": exports_or_none}))
    if all(a is b for a, b in zip(files, merged.files, strict=True)):
        return merged
    return merged.model_copy(update={"files": files})


def _clean(text: str | None, counts: Counter[str]) -> str | None:
    if text is None or len(text) < 16:  # every pattern needs more than this
        return text
    result = redact(text)
    counts.update(result.counts)
    return result.text


def _redact_export(export: Export, counts: Counter[str]) -> Export:
    signature, doc = _clean(export.signature, counts) or "", _clean(export.doc, counts)
    members = [_redact_export(m, counts) for m in export.members]
    if signature == export.signature and doc == export.doc and all(a is b for a, b in zip(members, export.members,
                                                                                          strict=True)):
        return export
    return export.model_copy(update={"signature": signature, "doc": doc, "members": members})


def require_parsed(rel: str, merged: MergedSkeleton, deep: bool, warnings: list[str]) -> None:
    """The seed's "AST 解析失败" for a target that did not parse; with `deep` a warning and the bodies instead."""
    broken = [f for f in merged.files if f.parse_errors]
    if not broken:
        return
    detail = "; ".join(f"{f.path}: {f.parse_errors[0]}" for f in broken[:3])
    if deep:
        warnings.append(f"AST 解析失败 in {len(broken)} file(s) ({detail}); the function bodies are in the context")
    elif len(broken) == len(merged.files):
        raise Code3Error(Code.VALIDATION, f"{PARSE_FAILED} ({detail})",
                         "fix the syntax error, or pass deep=true to send the source text itself")
    else:
        warnings.append(f"{len(broken)} of {len(merged.files)} file(s) do not parse cleanly: {detail}")


def spec_name(target: str) -> str:
    """The spec file's name for a target: `src/auth` → `src-auth.spec.md`, the project root → `_root.spec.md`;
    a dot-directory never makes a hidden spec: `.devcontainer` → `dot-devcontainer.spec.md`."""
    target = posixpath.normpath(target)
    if target in (".", ""):
        return "_root.spec.md"
    return "-".join(f"dot-{part[1:]}" if part.startswith(".") else part for part in target.split("/")) + ".spec.md"


def who(s: Services) -> str:
    signer = getattr(s, "signer", None)
    return getattr(signer, "name", None) or "unknown"
