"""`spec_mcp.specify`, `spec_mcp.plan`, `spec_mcp.tasks`: the spec-kit artifacts of a feature.

Files are written atomically (staged, then renamed in) before the event is saved; a file set that
exists without its event (a crash in between) is adopted by the next run instead of duplicated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from adapters.files import create_dir_atomically, write_files
from adapters.offline_writer import count_tasks
from domain.canonical import sha256_hex
from domain.errors import Code, Code3Error
from domain.spec import FEATURE_ID, Spec, next_feature_id
from mcp_tools.declare import tool
from mcp_tools.lifecycle.answers import PlanAnswer, SpecifyAnswer, TasksAnswer
from mcp_tools.services import Services

PLAN_FILES = ("plan.md", "research.md", "data-model.md", "quickstart.md")
TASK_INPUTS = ("research.md", "data-model.md", "quickstart.md")
FeatureIdArg = Annotated[str, Field(description="feature id, NNN-slug (e.g. 003-web-ai-agent)")]
Overwrite = Annotated[bool, Field(description="replace existing files instead of failing with E_EXISTS")]


def check_feature_id(feature_id: str) -> str:
    if not FEATURE_ID.match(feature_id):
        raise Code3Error(Code.VALIDATION, f"invalid feature_id {feature_id!r}",
                         "use NNN-slug: three digits, a dash, lower-case words joined by dashes (e.g. 001-login)")
    return feature_id


def _rel(s: Services, path: Path) -> str:
    return path.relative_to(s.project).as_posix()


@tool("spec_mcp.specify", profiles=("client-local", "client-remote"), open_world=False)
def specify(s: Services, feature_description: Annotated[str, Field(description="what the feature should do")],
            feature_id: Annotated[str | None, Field(description="NNN-slug; generated when omitted")] = None,
            allow_overwrite: Overwrite = False) -> SpecifyAnswer:
    """Create specs/<NNN-slug>/spec.md from a feature description."""
    description = feature_description.strip()
    if not description:
        raise Code3Error(Code.VALIDATION, "feature_description is empty", "describe the feature in a sentence or more")
    existing = [p.name for p in s.specs_dir.iterdir()] if s.specs_dir.exists() else []
    fid = check_feature_id(feature_id) if feature_id else next_feature_id(existing, description)
    text = s.writer.spec(fid, description)
    directory = s.specs_dir / fid
    if directory.exists():
        if not allow_overwrite:
            raise Code3Error(Code.EXISTS, f"specs/{fid} already exists",
                             "choose another feature_id or pass allow_overwrite=true")
        write_files(directory, {"spec.md": text})
    else:
        create_dir_atomically(s.specs_dir, fid, {"spec.md": text})
    digest = sha256_hex(text)

    def change(spec: Spec | None) -> Spec | None:
        if spec is None:
            return Spec(feature_id=fid, description=description, digest=digest)
        if spec.digests.get("spec.md") == digest:
            return None
        spec.rewrite(artifact="spec.md", digest=digest)
        return spec

    s.store.update(Spec, Spec.create_id(fid), change)
    return {"success": True, "feature_id": fid,
            "paths": {"spec": _rel(s, directory / "spec.md"), "dir": _rel(s, directory)}}


def _feature_dir(s: Services, feature_id: str) -> Path:
    return s.specs_dir / check_feature_id(feature_id)


@tool("spec_mcp.plan", profiles=("client-local",), open_world=False)
def plan(s: Services, feature_id: FeatureIdArg,
         tech_constraints: Annotated[str | None, Field(description="technical constraints for the plan")] = None,
         allow_overwrite: Overwrite = False) -> PlanAnswer:
    """Write plan.md, research.md, data-model.md, contracts/ and quickstart.md for a specified feature."""
    directory = _feature_dir(s, feature_id)
    spec_md = directory / "spec.md"
    if not spec_md.exists():
        raise Code3Error(Code.PRECONDITION, f"specs/{feature_id}/spec.md is missing",
                         "run spec_mcp.specify first")
    if (directory / "plan.md").exists() and not allow_overwrite:
        raise Code3Error(Code.EXISTS, f"specs/{feature_id}/plan.md already exists",
                         "pass allow_overwrite=true or remove the old plan files")
    files = s.writer.plan(feature_id, spec_md.read_text(encoding="utf-8"), tech_constraints)
    write_files(directory, files)
    digests = {name: sha256_hex(text) for name, text in files.items()}
    _ensure_spec(s, feature_id, spec_md)

    def change(spec: Spec | None) -> Spec | None:
        assert spec is not None
        if spec.planned and all(spec.digests.get(k) == v for k, v in digests.items()):
            return None
        spec.plan(digests=digests, tech_constraints=tech_constraints)
        return spec

    s.store.update(Spec, Spec.create_id(feature_id), change)
    return {"success": True, "paths": {
        "plan": _rel(s, directory / "plan.md"), "research": _rel(s, directory / "research.md"),
        "data_model": _rel(s, directory / "data-model.md"), "contracts": _rel(s, directory / "contracts"),
        "quickstart": _rel(s, directory / "quickstart.md"),
    }}


@tool("spec_mcp.tasks", profiles=("client-local",), open_world=False)
def tasks(s: Services, feature_id: FeatureIdArg, allow_overwrite: Overwrite = False) -> TasksAnswer:
    """Write tasks.md (TDD order, parallel and dependency marks) from the plan's artifacts."""
    directory = _feature_dir(s, feature_id)
    missing = [name for name in TASK_INPUTS if not (directory / name).exists()]
    if not (directory / "contracts").is_dir():
        missing.append("contracts/")
    if missing:
        raise Code3Error(Code.PRECONDITION, f"specs/{feature_id} lacks {', '.join(missing)}",
                         "run spec_mcp.plan first")
    target = directory / "tasks.md"
    if target.exists() and not allow_overwrite:
        raise Code3Error(Code.EXISTS, f"specs/{feature_id}/tasks.md already exists",
                         "pass allow_overwrite=true to regenerate it")
    inputs = {p.relative_to(directory).as_posix(): p.read_text(encoding="utf-8")
              for p in sorted(directory.rglob("*.md")) if p.name != "tasks.md"}
    text = s.writer.tasks(feature_id, inputs)
    write_files(directory, {"tasks.md": text})
    digest = sha256_hex(text)
    _ensure_spec(s, feature_id, directory / "spec.md")

    def change(spec: Spec | None) -> Spec | None:
        assert spec is not None
        if spec.tasked and spec.digests.get("tasks.md") == digest:
            return None
        spec.task(digest=digest, task_count=count_tasks(text))
        return spec

    s.store.update(Spec, Spec.create_id(feature_id), change)
    return {"success": True, "path": _rel(s, target)}


def _ensure_spec(s: Services, feature_id: str, spec_md: Path) -> None:
    """A spec written by hand (or by another tool) joins the log the first time Code3 touches it."""
    if not spec_md.exists():
        return
    digest = sha256_hex(spec_md.read_text(encoding="utf-8"))
    s.store.update(Spec, Spec.create_id(feature_id), lambda spec: None if spec else Spec(
        feature_id=feature_id, description=f"(adopted from {spec_md.name})", digest=digest))
