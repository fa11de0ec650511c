"""`generate`: a `.spec.md` for a file or directory — front matter, nine sections, diagrams, inventory,
baseline skeleton — written atomically, and a GeneratedSpec event (who, skeleton hash, model, tokens)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, TypedDict

from pydantic import Field

from adapters.event_store import Change
from adapters.paths import PathRefused, ProjectPaths
from domain.knowledge.generated_spec import GeneratedSpec
from domain.knowledge.module_graph import api_hash
from domain.knowledge.skeleton import MergedSkeleton
from domain.knowledge.spec_document import SpecFormatError, parse_front, render
from mcp_tools.declare import tool
from mcp_tools.reverse_spec import author
from mcp_tools.reverse_spec.answers import GenerateAnswer, TokenUsage
from mcp_tools.reverse_spec.common import (
    PROFILE,
    failed,
    load_skeleton,
    parser_version,
    paths_of,
    relative,
    require_parsed,
    resolve,
    seed_errors,
    spec_name,
    who,
)
from mcp_tools.reverse_spec.prepare import build_context
from mcp_tools.services import Services

TargetPath = Annotated[str, Field(description="目标文件或目录路径")]
Deep = Annotated[bool, Field(description="深度分析模式")]
OutputDir = Annotated[str, Field(description="输出目录")]


def now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def usage(input_tokens: int = 0, output_tokens: int = 0, estimated: bool = False) -> TokenUsage:
    return {"inputTokens": input_tokens, "outputTokens": output_tokens, "totalTokens": input_tokens + output_tokens,
            "estimated": estimated}


@dataclass
class Written:
    spec_path: str
    usage: TokenUsage
    confidence: str
    model: str
    warnings: list[str] = field(default_factory=list)

    @property
    def degraded(self) -> bool:
        return self.model == "offline" or self.confidence == "low"

    def answer(self) -> GenerateAnswer:
        return {"specPath": self.spec_path, "tokenUsage": self.usage, "confidence": self.confidence,  # type: ignore[typeddict-item]
                "warnings": self.warnings}


def previous_version(paths: ProjectPaths, path: Path) -> int:
    if not path.is_file():
        return 0
    try:
        version = parse_front(paths.read_text(paths.relative(path))).get("version", 0)
        return int(str(version).lstrip("v"))
    except (OSError, PathRefused, SpecFormatError, ValueError):
        return 0


def write_spec(s: Services, rel: str, merged: MergedSkeleton, out_dir: Path, *, deep: bool = False,
               name: str | None = None, scope: str | None = None) -> Written:
    """Author, render and write one module's spec, then record it. `scope: directory` (batch's modules) says
    the module is the directory's own files, not its subdirectories' (domain/knowledge/module_scope.py)."""
    warnings: list[str] = []
    require_parsed(rel, merged, deep, warnings)
    context = build_context(s, rel, merged, deep)
    authored = author.write(getattr(s, "llm", None), merged, rel, context)
    confidence = author.confidence(authored, merged, context)
    paths = paths_of(s)  # the spec file through the resolver: never a symlink out, never into the state
    target = paths.resolve(f"{relative(s, out_dir)}/{name or spec_name(rel)}", kind="file", must_exist=False)
    version = previous_version(paths, target) + 1
    surface = api_hash(merged.files)
    front = {"type": "module-spec", "version": version, "sourceTarget": rel,
             "relatedFiles": [f.path for f in merged.files], "lastUpdated": now_iso(), "confidence": confidence,
             "skeletonHash": surface, "model": authored.model, "parserVersion": parser_version(s)}
    if scope:
        front["scope"] = scope
    text = render(front, f"Module spec: {rel}", authored.sections, merged)
    paths.write_text(relative(s, target), text)
    spec_path = relative(s, target)
    record_generated(s, spec_path, rel, surface, authored, version, confidence)
    return Written(spec_path, usage(authored.input_tokens, authored.output_tokens, estimated=authored.offline),
                   confidence, authored.model, [*warnings, *context.warnings, *authored.warnings])


class _Generation(TypedDict):
    """What a (re)generation records: GeneratedSpec's `__init__` and `record_generation` arguments but the path."""

    source_target: str
    skeleton_hash: str
    model: str
    input_tokens: int
    output_tokens: int
    who: str
    version: int
    confidence: str


def record_generated(s: Services, spec_path: str, rel: str, surface: str, authored: author.Authored, version: int,
                     confidence: str) -> None:
    fields: _Generation = {"source_target": rel, "skeleton_hash": surface, "model": authored.model,
                           "input_tokens": authored.input_tokens, "output_tokens": authored.output_tokens,
                           "who": who(s), "version": version, "confidence": confidence}
    s.store.update_all(Change.step(GeneratedSpec, GeneratedSpec.create_id(spec_path),
                                   lambda spec: spec.record_generation(**fields),
                                   create=lambda: GeneratedSpec(spec_path=spec_path, **fields)))


@tool("generate", profiles=PROFILE, idempotent=False, open_world=True, error_text=failed("generate"))
@seed_errors
def generate(s: Services, targetPath: TargetPath, deep: Deep = False,
             outputDir: OutputDir = "specs") -> GenerateAnswer:
    """完整 Spec 生成流水线

    Writes <outputDir>/<target>.spec.md: YAML front matter, the nine sections, Mermaid class and dependency
    diagrams, a file inventory and the baseline skeleton that `diff` checks against. The model is Claude when
    ANTHROPIC_API_KEY is set, else the offline writer (AST only, said in warnings).
    """
    rel, merged = load_skeleton(s, targetPath)
    out_dir = resolve(s, outputDir, kind="dir", must_exist=False)
    return write_spec(s, rel, merged, out_dir, deep=deep).answer()
