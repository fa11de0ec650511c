"""CodeNexus: what people know about a project's files — tags, a comment, typed relationships.

`FileMeta` is one file's knowledge, under a stable file id; `FilePath` is the lookup from a path to the
file id that holds it (so a rename keeps the id, and a new file later created at the old path gets a
new one: the path's generation counts how often it was given up); `Tag` keeps a tag's description and
colour; `NexusBaseline` the git commit renames are detected from. Ids derive from the project id (kept
in the project's state, never the absolute root) and a natural key.

Every rule lives here and every command is idempotent: repeating it records nothing.
"""

from __future__ import annotations

import re
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.canonical import natural_id
from domain.errors import Code, Code3Error

TAG = re.compile(r"[a-z0-9_-]{2,50}")
COLOR = re.compile(r"#[0-9a-fA-F]{6}")
RELATIONSHIP_TYPES = ("imports", "calls", "configures", "depends_on")
ORIGINS = ("manual", "derived")
MAX_COMMENT = 2000
MAX_DESCRIPTION = 500
MAX_TAG_DESCRIPTION = 500
MAX_TAGS_PER_CALL = 50
MAX_TAGS_PER_FILE = 100
MAX_RELATIONSHIPS_PER_FILE = 10_000


class MetaRefused(Code3Error):
    """A CodeNexus rule refused the input (the MCP front answers -32002 Validation failed)."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(Code.VALIDATION, message, hint)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_tag(value: object) -> str:
    if not isinstance(value, str) or not TAG.fullmatch(value):
        hint = "tags are 2-50 characters of a-z, 0-9, '_' or '-' (lower-case), such as backend or api_v2"
        if isinstance(value, str) and TAG.fullmatch(value.lower()):
            hint = f"tags are lower-case: use {value.lower()!r}"
        raise MetaRefused(f"invalid tag {_shown(value)}", hint)
    return value


def parse_tags(value: object, at_least_one: bool = True) -> list[str]:
    """Distinct valid tags, in the order given."""
    if not isinstance(value, list) or (at_least_one and not value) or len(value) > MAX_TAGS_PER_CALL:
        raise MetaRefused("tags must be a list of 1 to 50 tags",
                          'pass tags as a JSON array of strings, e.g. ["backend", "core"]')
    return list(dict.fromkeys(parse_tag(t) for t in value))


def parse_comment(value: object) -> str:
    if not isinstance(value, str):
        raise MetaRefused("comment must be a string", "pass the comment as text (Markdown allowed)")
    if len(value) > MAX_COMMENT:
        raise MetaRefused(f"comment is {len(value)} characters long; at most {MAX_COMMENT} are allowed",
                          "shorten the comment")
    if "\x00" in value:
        raise MetaRefused("comment contains a NUL character", "remove control characters from the comment")
    return value


def parse_description(value: object, limit: int = MAX_DESCRIPTION) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MetaRefused("description must be a string", "pass the description as text")
    if len(value) > limit:
        raise MetaRefused(f"description is {len(value)} characters long; at most {limit} are allowed",
                          "shorten the description")
    if "\x00" in value:
        raise MetaRefused("description contains a NUL character", "remove control characters")
    return value


def parse_relationship_type(value: object) -> str:
    if value not in RELATIONSHIP_TYPES:
        raise MetaRefused(f"unknown relationship type {_shown(value)}",
                          f"use one of {', '.join(RELATIONSHIP_TYPES)}")
    return str(value)


def parse_color(value: object) -> str:
    if not isinstance(value, str) or not COLOR.fullmatch(value):
        raise MetaRefused(f"invalid colour {_shown(value)}", "use #rrggbb, such as #ff6b6b")
    return value.lower()


def relation_key(target_id: str, kind: str) -> str:
    return f"{target_id} {kind}"


class FilePath(Aggregate):
    """Which file id holds a path now; `generation` counts how often the path was given up."""

    class Claimed(Aggregate.Created):
        project_id: str
        path: str
        file_id: str

    class Reclaimed(Aggregate.Event):
        file_id: str

    class Released(Aggregate.Event):
        pass

    @staticmethod
    def create_id(project_id: str, path: str) -> UUID:
        return natural_id("nexus-path", f"{project_id}:{path}")

    @event(Claimed)
    def __init__(self, project_id: str, path: str, file_id: str) -> None:
        self.project_id, self.path = project_id, path
        self.file_id: str | None = file_id
        self.generation = 0

    def next_file_id(self) -> UUID:
        """The id a new file at this path gets (its generation makes it differ from every earlier one)."""
        return FileMeta.create_id(self.project_id, self.path, self.generation)

    def file_id_here(self) -> UUID:
        """The id of the file at this path: its holder's, or while the path is free the id a new file gets."""
        return UUID(self.file_id) if self.file_id is not None else self.next_file_id()

    def claim_for(self, file_id: str) -> bool:
        """Take the path for `file_id` (a file renamed here, a new file at a released path): nothing to record
        when it holds it already; refused while another file's metadata holds it, which no file takes over."""
        if self.file_id == file_id:
            return False
        if self.file_id is not None:
            raise MetaRefused(f"{self.path} is held by another file's metadata", "sync again after removing it")
        self.reclaim(file_id)
        return True

    def release_from(self, file_id: str) -> bool:
        """Give the path up if `file_id` holds it (the file was renamed away); a path another file holds now is
        left to that file."""
        if self.file_id != file_id:
            return False
        self.release()
        return True

    @event(Reclaimed)
    def reclaim(self, file_id: str) -> None:
        self.file_id = file_id

    def release(self) -> None:
        if self.file_id is not None:
            self._released()

    @event(Released)
    def _released(self) -> None:
        self.file_id = None
        self.generation += 1


class FileMeta(Aggregate):
    """Tags, comment and outgoing relationships of one file (incoming ones live on their sources)."""

    class Registered(Aggregate.Created):
        project_id: str
        path: str
        generation: int = 0

    class Tagged(Aggregate.Event):
        tags: list[str]

    class Untagged(Aggregate.Event):
        tags: list[str]

    class Commented(Aggregate.Event):
        comment: str

    class RelationshipCreated(Aggregate.Event):
        target_id: str
        target_path: str
        kind: str
        description: str
        origin: str

    class RelationshipRemoved(Aggregate.Event):
        target_id: str
        kind: str

    class Moved(Aggregate.Event):
        old_path: str
        new_path: str

    @staticmethod
    def create_id(project_id: str, path: str, generation: int = 0) -> UUID:
        return natural_id("nexus-file", f"{project_id}:{path}#{generation}")

    @event(Registered)
    def __init__(self, project_id: str, path: str, generation: int = 0) -> None:
        self.project_id, self.path = project_id, path
        self.tags: list[str] = []
        self.comment = ""
        self.relations: dict[str, dict[str, Any]] = {}

    # -- tags -------------------------------------------------------------------------------------
    def add_tags(self, tags: list[str]) -> list[str]:
        """Record the tags not there yet; returns those added (none: nothing recorded)."""
        added = [t for t in tags if t not in self.tags]
        if len(self.tags) + len(added) > MAX_TAGS_PER_FILE:
            raise MetaRefused(f"{self.path} would have more than {MAX_TAGS_PER_FILE} tags",
                              "remove tags first (remove_tag)")
        if added:
            self._tagged(tags=added)
        return added

    @event(Tagged)
    def _tagged(self, tags: list[str]) -> None:
        self.tags.extend(tags)

    def remove_tags(self, tags: list[str]) -> list[str]:
        removed = [t for t in tags if t in self.tags]
        if removed:
            self._untagged(tags=removed)
        return removed

    @event(Untagged)
    def _untagged(self, tags: list[str]) -> None:
        self.tags = [t for t in self.tags if t not in tags]

    # -- comment ----------------------------------------------------------------------------------
    def set_comment(self, comment: str) -> bool:
        if comment == self.comment:
            return False
        self._commented(comment=comment)
        return True

    @event(Commented)
    def _commented(self, comment: str) -> None:
        self.comment = comment

    # -- relationships ----------------------------------------------------------------------------
    def check_relation(self, target_id: str, kind: str, description: str) -> str:
        """'new', 'same' (already recorded as asked: nothing to do) or 'upgrade' (a derived one a person
        now confirms); refuses self-relations and a different duplicate."""
        if target_id == str(self.id):
            raise MetaRefused(f"{self.path} cannot be related to itself", "pick two different files")
        existing = self.relations.get(relation_key(target_id, kind))
        if existing is None:
            if len(self.relations) >= MAX_RELATIONSHIPS_PER_FILE:
                raise MetaRefused(f"{self.path} has {MAX_RELATIONSHIPS_PER_FILE} relationships already",
                                  "remove relationships first")
            return "new"
        if existing["origin"] == "derived":
            return "upgrade"
        if existing["description"] == description:
            return "same"
        raise MetaRefused(f"{self.path} already has a {kind} relationship to that file",
                          "remove it first (remove_relationship) to change its description")

    def relate(self, target_id: str, target_path: str, kind: str, description: str, origin: str = "manual"
               ) -> bool:
        """Record a relationship; True when something was recorded. A derived relationship never
        replaces one that exists (a person's, or the same derived one)."""
        if origin == "derived":
            if relation_key(target_id, kind) in self.relations or target_id == str(self.id):
                return False
        elif self.check_relation(target_id, kind, description) == "same":
            return False
        self._related(target_id=target_id, target_path=target_path, kind=kind, description=description,
                      origin=origin)
        return True

    @event(RelationshipCreated)
    def _related(self, target_id: str, target_path: str, kind: str, description: str, origin: str) -> None:
        self.relations[relation_key(target_id, kind)] = {"target_id": target_id, "kind": kind,
                                                         "description": description, "origin": origin}

    def unrelate(self, target_id: str, kind: str, only_derived: bool = False) -> bool:
        existing = self.relations.get(relation_key(target_id, kind))
        if existing is None or (only_derived and existing["origin"] != "derived"):
            return False
        self._unrelated(target_id=target_id, kind=kind)
        return True

    @event(RelationshipRemoved)
    def _unrelated(self, target_id: str, kind: str) -> None:
        self.relations.pop(relation_key(target_id, kind), None)

    # -- renames ----------------------------------------------------------------------------------
    def move(self, new_path: str) -> bool:
        if new_path == self.path:
            return False
        self._moved(old_path=self.path, new_path=new_path)
        return True

    @event(Moved)
    def _moved(self, old_path: str, new_path: str) -> None:
        self.path = new_path


class Tag(Aggregate):
    """A tag's description and colour (what the tags resource shows beside its usage)."""

    class Defined(Aggregate.Created):
        project_id: str
        name: str
        description: str
        color: str

    class Described(Aggregate.Event):
        name: str
        description: str
        color: str

    @staticmethod
    def create_id(project_id: str, name: str) -> UUID:
        return natural_id("nexus-tag", f"{project_id}:{name}")

    @classmethod
    def define(cls, project_id: str, name: str, description: str, color: str | None = None) -> Tag:
        """A tag described for the first time; without a colour it gets its name's default from the palette, so a
        tag keeps one colour wherever it is shown."""
        return cls(project_id=project_id, name=name, description=description, color=color or default_color(name))

    @event(Defined)
    def __init__(self, project_id: str, name: str, description: str, color: str) -> None:
        self.project_id, self.name = project_id, name
        self.description, self.color = description, color

    def describe(self, description: str, color: str | None = None) -> bool:
        """Record a new description or colour; a colour not given keeps the tag's (describing a tag again need not
        repeat its colour). Nothing is recorded when nothing changes."""
        color = color or self.color
        if (description, color) == (self.description, self.color):
            return False
        self._described(name=self.name, description=description, color=color)
        return True

    @event(Described)
    def _described(self, name: str, description: str, color: str) -> None:
        self.description, self.color = description, color


class NexusBaseline(Aggregate):
    """The git commit the last rename sync looked from (one per project)."""

    class Started(Aggregate.Created):
        project_id: str
        commit: str

    class Synced(Aggregate.Event):
        commit: str

    @staticmethod
    def create_id(project_id: str) -> UUID:
        return natural_id("nexus-baseline", project_id)

    @event(Started)
    def __init__(self, project_id: str, commit: str) -> None:
        self.project_id, self.commit = project_id, commit

    def advance(self, commit: str) -> bool:
        if commit == self.commit:
            return False
        self._synced(commit=commit)
        return True

    @event(Synced)
    def _synced(self, commit: str) -> None:
        self.commit = commit


PALETTE = ("#ff6b6b", "#4ecdc4", "#45b7d1", "#f9c74f", "#90be6d", "#f8961e", "#9b5de5", "#577590")


def default_color(tag: str) -> str:
    """A stable colour for a tag nobody described (the same on every machine)."""
    return PALETTE[sum(tag.encode()) % len(PALETTE)]
