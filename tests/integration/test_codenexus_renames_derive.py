"""CodeNexus metadata follows `git mv`, and `imports` relationships derived from the code never replace a
person's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.git import git
from code3.settings import Settings
from code3.wiring import build_services
from mcp_tools.codenexus import extras, resources
from mcp_tools.codenexus.derive import derive_relationships
from mcp_tools.codenexus.renames import sync_renames
from mcp_tools.codenexus.tools import add_comment, add_tag, create_relationship, query_files
from mcp_tools.services import Services

SOURCES = {
    "app/main.py": "from app import util\nfrom app.models import User\nimport os\n\nutil.run(User())\n",
    "app/util.py": "def run(x):\n    return x\n",
    "app/models.py": "class User:\n    pass\n",
    "app/__init__.py": "",
    "README.md": "# demo\n",
}


@pytest.fixture
def repo(tmp_path: Path, database_url: str | None) -> Iterator[Services]:
    root = tmp_path / "repo"
    for rel, text in SOURCES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".gitignore").write_text(".code3/\n")
    git("init", "-q", cwd=root)
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", "initial", cwd=root)
    s = build_services(Settings(project=root, database_url=database_url))
    yield s
    s.close()


def test_tags_comments_and_relationships_survive_git_mv(repo: Services) -> None:
    root = repo.project
    add_tag(repo, "app/util.py", ["helpers"])
    add_comment(repo, "app/util.py", "工具函数")
    create_relationship(repo, "app/main.py", "app/util.py", "calls", "main calls run")
    create_relationship(repo, "app/util.py", "app/models.py", "depends_on")
    git("mv", "app/util.py", "app/tools.py", cwd=root)
    git("commit", "-q", "-m", "rename util", cwd=root)
    synced = sync_renames(repo)
    assert synced["moved"] == [{"old_path": "app/util.py", "new_path": "app/tools.py"}]
    meta = resources.file_metadata(repo, "app/tools.py")
    assert meta["tags"] == ["helpers"] and meta["comment"] == "工具函数"
    assert meta["relationships"][0]["target"] == "app/models.py"
    rel = resources.file_relationships(repo, "app/tools.py")
    assert rel["incoming_relationships"][0]["source"] == "app/main.py"
    assert query_files(repo, tags=["helpers"])["results"][0]["file_path"] == "app/tools.py"
    assert sync_renames(repo)["moved"] == [], "a second sync moves nothing"
    (root / "app/util.py").write_text("# a new file at the old path\n")
    assert add_tag(repo, "app/util.py", ["fresh"])["total_tags"] == 1, "a new file there starts empty"
    assert resources.file_metadata(repo, "app/tools.py")["tags"] == ["helpers"]


def test_a_staged_git_mv_is_followed_before_the_commit(repo: Services) -> None:
    add_tag(repo, "app/models.py", ["domain"])
    git("mv", "app/models.py", "app/entities.py", cwd=repo.project)
    assert sync_renames(repo)["moved"] == [{"old_path": "app/models.py", "new_path": "app/entities.py"}]
    assert query_files(repo, tags=["domain"])["results"][0]["file_path"] == "app/entities.py"
    git("commit", "-q", "-m", "rename models", cwd=repo.project)
    assert sync_renames(repo)["moved"] == []


def test_derived_imports_are_marked_and_never_replace_a_person_s(repo: Services) -> None:
    create_relationship(repo, "app/main.py", "app/util.py", "imports", "a person wrote this")
    first = derive_relationships(repo)
    assert first["created"] >= 1 and first["kept_manual"] == 1
    out = {r["target"]: r for r in resources.file_relationships(repo, "app/main.py")["outgoing_relationships"]}
    assert out["app/util.py"]["origin"] == "manual" and out["app/util.py"]["description"] == "a person wrote this"
    assert out["app/models.py"]["origin"] == "derived" and out["app/models.py"]["type"] == "imports"
    again = derive_relationships(repo)
    assert again["created"] == 0 and again["removed"] == 0
    (repo.project / "app/main.py").write_text("import os\n")
    gone = derive_relationships(repo, "app")
    assert gone["removed"] == 1
    out = {r["target"]: r for r in resources.file_relationships(repo, "app/main.py")["outgoing_relationships"]}
    assert set(out) == {"app/util.py"}, "the derived one went with its import; the person's stays"


def test_a_person_confirming_a_derived_relationship_makes_it_theirs(repo: Services) -> None:
    derive_relationships(repo)
    create_relationship(repo, "app/main.py", "app/models.py", "imports", "the user model")
    (repo.project / "app/main.py").write_text("import os\n")
    derive_relationships(repo)
    out = resources.file_relationships(repo, "app/main.py")["outgoing_relationships"]
    assert [(r["target"], r["origin"]) for r in out] == [("app/models.py", "manual")]
    assert extras.remove_relationship(repo, "app/main.py", "app/models.py", "imports")["removed"]
