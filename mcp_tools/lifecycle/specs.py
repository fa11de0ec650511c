"""`spec_mcp.specify`, `spec_mcp.plan`, `spec_mcp.tasks`: the spec-kit artifacts of a feature.

A feature directory is written whole (`adapters.files.replace_dir`: the complete new version staged,
then swapped in) under a lock on `specs/`, before the event is saved; a file set that exists without
its event (a crash in between) is adopted by the next run instead of duplicated. Several `specify`
calls at once queue on the lock, so each gets its own number.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NotRequired, TypedDict

from pydantic import Field

from adapters.event_store import Change
from adapters.files import recover, replace_dir
from adapters.paths import ProjectPaths
from domain.bounties.open_questions import OpenQuestion, open_questions, refuse, warning
from domain.bounties.spec import Spec, count_tasks, feature_number, next_number, short_name
from domain.canonical import sha256_hex
from domain.errors import Code, Code3Error
from domain.values import parse_feature_id
from mcp_tools.declare import tool
from mcp_tools.lifecycle.answers import PlanAnswer, SpecifyAnswer, TasksAnswer
from mcp_tools.services import Services

PLAN_FILES = ("plan.md", "research.md", "data-model.md", "quickstart.md")
TASK_INPUTS = ("research.md", "data-model.md", "quickstart.md")
FeatureIdArg = Annotated[str, Field(description="feature id, NNN-slug (e.g. 003-web-ai-agent)")]
Overwrite = Annotated[bool, Field(description="replace existing files instead of failing with E_EXISTS")]


def check_feature_id(feature_id: str) -> str:
    return parse_feature_id(feature_id)


def recover_all(specs_dir: Path) -> None:
    """Finish or undo every feature-directory write a crash interrupted (call under `locked(specs_dir)`)."""
    for hidden in specs_dir.glob(".*"):
        for suffix in (".tmp", ".new", ".old"):
            if hidden.name.endswith(suffix):
                recover(specs_dir, hidden.name[1:-len(suffix)])


def _rel(s: Services, path: Path) -> str:
    return path.relative_to(s.project).as_posix()


def _paths(s: Services) -> ProjectPaths:
    """The resolver: `specs/` and a feature directory that lead out of the project (or into its state) are
    refused before anything is read or written."""
    if s.paths is None:
        s.paths = ProjectPaths(s.project)
    return s.paths


def _read(s: Services, path: Path) -> str:
    return _paths(s).read_text(_rel(s, path))


@tool("spec_mcp.specify", profiles=("client-local", "client-remote"), open_world=False)
def specify(s: Services, feature_description: Annotated[str, Field(description="what the feature should do")],
            feature_id: Annotated[str | None, Field(description="NNN-slug; generated when omitted")] = None,
            allow_overwrite: Overwrite = False) -> SpecifyAnswer:
    """Create specs/<NNN-slug>/spec.md from a feature description."""
    description = feature_description.strip()
    if not description:
        raise Code3Error(Code.VALIDATION, "feature_description is empty", "describe the feature in a sentence or more")
    fid = check_feature_id(feature_id) if feature_id else ""
    text = s.writer.spec(fid, description) if fid else ""  # outside the lock: a writer may take its time
    with _paths(s).locked_dir("specs"):
        recover_all(s.specs_dir)
        if fid:
            _paths(s).resolve(f"specs/{fid}", kind="dir", must_exist=False)
            if (s.specs_dir / fid).exists() and not allow_overwrite:
                raise Code3Error(Code.EXISTS, f"specs/{fid} already exists",
                                 "choose another feature_id or pass allow_overwrite=true")
            replace_dir(s.specs_dir, fid, {"spec.md": text})
        else:
            fid, text = _create_numbered(s, description)
    directory = s.specs_dir / fid
    digest = sha256_hex(text)
    s.store.update_all(Change.step(Spec, Spec.create_id(fid), lambda spec: spec.rewrite_once("spec.md", digest),
                                   create=lambda: Spec(feature_id=fid, description=description, digest=digest)))
    return {"success": True, "feature_id": fid,
            "paths": {"spec": _rel(s, directory / "spec.md"), "dir": _rel(s, directory)},
            **questions_said(open_questions(text), _rel(s, directory / "spec.md"))}


def questions_said(questions: list[OpenQuestion], path: str) -> QuestionsSaid:
    """The answer's `open_questions` count, and a warning naming them when the spec is still a template to fill."""
    said: QuestionsSaid = {"open_questions": len(questions)}
    if questions:
        said["warnings"] = [warning(questions, path)]
    return said


class QuestionsSaid(TypedDict):
    open_questions: int
    warnings: NotRequired[list[str]]


def _create_numbered(s: Services, description: str) -> tuple[str, str]:
    """A new feature directory under the next free number; a number taken meanwhile by another writer
    (one that does not take the lock) makes it try the next one."""
    name = short_name(description)
    used = {n for n in map(feature_number, (p.name for p in s.specs_dir.iterdir())) if n is not None}
    while True:
        fid = f"{next_number(used):03d}-{name}"
        text = s.writer.spec(fid, description)
        try:
            replace_dir(s.specs_dir, fid, {"spec.md": text}, must_be_new=True)
        except Code3Error as exc:
            if exc.code is not Code.EXISTS:
                raise
            used.add(int(fid[:3]))
            continue
        return fid, text


def _feature_dir(s: Services, feature_id: str) -> Path:
    """The feature's directory, with any write a crash interrupted finished or undone first."""
    check_feature_id(feature_id)
    with _paths(s).locked_dir("specs"):
        _paths(s).resolve(f"specs/{feature_id}", kind="dir", must_exist=False)
        recover(s.specs_dir, feature_id)
    return s.specs_dir / feature_id


def _write(s: Services, feature_id: str, files: dict[str, str]) -> None:
    with _paths(s).locked_dir("specs"):
        _paths(s).resolve(f"specs/{feature_id}", kind="dir", must_exist=False)
        replace_dir(s.specs_dir, feature_id, files)


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
    spec_text = _read(s, spec_md)
    questions = open_questions(spec_text)
    if s.refuse_open_questions:
        refuse(questions, _rel(s, spec_md))  # before the writer runs or anything is written
    files = s.writer.plan(feature_id, spec_text, tech_constraints)
    _write(s, feature_id, files)
    digests = {name: sha256_hex(text) for name, text in files.items()}
    _ensure_spec(s, feature_id, spec_md)
    s.store.update_all(Change.step(Spec, Spec.create_id(feature_id),  # _ensure_spec above saved it
                                   lambda spec: spec.plan_once(digests, tech_constraints),
                                   what=f"the Spec of {feature_id}"))
    return {"success": True, "paths": {
        "plan": _rel(s, directory / "plan.md"), "research": _rel(s, directory / "research.md"),
        "data_model": _rel(s, directory / "data-model.md"), "contracts": _rel(s, directory / "contracts"),
        "quickstart": _rel(s, directory / "quickstart.md"),
    }, **questions_said(questions, _rel(s, spec_md))}


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
    inputs = {rel.removeprefix(f"specs/{feature_id}/"): _paths(s).read_text(rel)
              for rel in sorted(_paths(s).walk(f"specs/{feature_id}", suffix=".md")) if not rel.endswith("/tasks.md")}
    text = s.writer.tasks(feature_id, inputs)
    _write(s, feature_id, {"tasks.md": text})
    digest = sha256_hex(text)
    _ensure_spec(s, feature_id, directory / "spec.md")
    s.store.update_all(Change.step(Spec, Spec.create_id(feature_id),  # _ensure_spec above saved it
                                   lambda spec: spec.task_once(digest, count_tasks(text)),
                                   what=f"the Spec of {feature_id}"))
    return {"success": True, "path": _rel(s, target)}


def _ensure_spec(s: Services, feature_id: str, spec_md: Path) -> None:
    """A spec written by hand (or by another tool) joins the log the first time Code3 touches it."""
    if not spec_md.exists():
        return
    digest = sha256_hex(_read(s, spec_md))
    s.store.update(Spec, Spec.create_id(feature_id), lambda spec: None if spec else Spec(
        feature_id=feature_id, description=f"(adopted from {spec_md.name})", digest=digest))
