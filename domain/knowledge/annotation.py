"""The Annotation aggregate (ai-loom): a note on a line range of a project file, kept anchored as the file changes.

Handlers follow one rhythm: load (or create) → call a method → save, with the ports passed in: the
file's text read through the project's path resolver, the clock's `at`, and a `Sealer` for secrets.

A `secret` annotation's comment and quoted text (selected lines and their context) never enter an
event in clear: the event carries `sealed` (the sealer's opaque output) and `digest`, the sha256 of
the sealed payload, which includes a random salt so that the digest of a short comment cannot be
confirmed by guessing. Tags, the path, the line range and the file's digest stay in clear. A text
that bears a credential (the sealer's `must_seal`: a `ghp_…` token, an `AKIA…` key, a PEM key) is
sealed the same way whatever the sensitivity, so re-anchoring still finds it by its quoted text.
Once sealed, an annotation's texts stay sealed in every later event.

A sensitivity only rises through `edit` (what MCP and REST reach): lowering is `lower`, the owner's act
at the CLI, recorded with who did it. An annotation whose text is already in the log in clear cannot
become secret (that would promise a secrecy the log cannot keep).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.canonical import canonical_json, natural_id, sha256_hex
from domain.errors import Code, Code3Error, present
from domain.knowledge.anchor import Anchor, AnchorResult, file_digest, reanchor, snippet_at
from domain.knowledge.annotation_rules import (
    DEFAULT_PRIORITY,
    MAX_COMMENT_CHARS,
    MAX_LINES,
    MAX_QUOTE_CHARS,
    MAX_TAGS,
    PRIORITIES,
    SENSITIVITIES,
    annotation_uuid,
    check_anchor,
    check_client_key,
    check_comment,
    check_path,
    check_priority,
    check_range,
    check_sensitivity,
    check_tags,
    format_ann_id,
    invalid,
    parse_ann_id,
)
from domain.knowledge.stitch import StitchItem

__all__ = ["DEFAULT_PRIORITY", "MAX_COMMENT_CHARS", "MAX_LINES", "MAX_QUOTE_CHARS", "MAX_TAGS", "PRIORITIES",
           "SENSITIVITIES", "Annotation", "JudgingSealer", "Sealer", "annotation_uuid", "format_ann_id",
           "parse_ann_id"]

_ANCHOR_TEXTS = ("selected_text", "context_before", "context_after")
RANK = {level: rank for rank, level in enumerate(SENSITIVITIES)}  # public < internal < secret


def _bears_credential(sealer: Sealer | None, texts: dict[str, Any]) -> bool:
    """Whether the sealer judges one of `texts` credential-bearing (a bare box, without `must_seal`, judges none:
    the tools hand the aggregate adapters.sealing.CredentialSealer)."""
    return isinstance(sealer, JudgingSealer) and any(isinstance(t, str) and sealer.must_seal(t) for t in texts.values())


class Sealer(Protocol):
    """Seals text so that only this installation can open it (adapters/secret_box.py: AES-GCM): all a secret
    annotation needs, so a bare box will do."""

    def seal(self, plaintext: str) -> str: ...

    def open(self, sealed: str) -> str: ...


@runtime_checkable
class JudgingSealer(Sealer, Protocol):
    """A sealer that also judges which texts bear a credential (adapters.sealing.CredentialSealer, what the tools
    hand the aggregate): those are sealed whatever the sensitivity. Optional: a bare box judges none."""

    def must_seal(self, text: str) -> bool:
        """Whether `text` bears a credential, so that the log keeps it sealed whatever the sensitivity."""
        ...


def _iso(at: datetime) -> str:
    if at.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return at.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _need_sealer(sealer: Sealer | None) -> Sealer:
    if sealer is None:
        raise Code3Error(Code.INTERNAL, "secret annotations need the keystore's sealer",
                         "the server was started without a keystore; configure one")
    return sealer


def _seal(sealer: Sealer | None, payload: dict[str, Any]) -> tuple[str, str, str]:
    """(sealed, digest, salt) of a secret payload; a fresh salt makes the digest unguessable."""
    salt = secrets.token_hex(16)
    text = canonical_json({**payload, "salt": salt})
    return _need_sealer(sealer).seal(text), sha256_hex(text), salt


class Annotation(Aggregate):

    class Annotated(Aggregate.Created):
        file_path: str
        start_line: int
        end_line: int
        comment: str | None
        tags: list[str]
        priority: str
        sensitivity: str
        selected_text: str | None
        context_before: str | None
        context_after: str | None
        file_digest: str
        occurrences: int
        sealed: str | None
        digest: str | None
        request_digest: str
        at: str

    class Edited(Aggregate.Event):
        changes: dict[str, Any]
        at: str

    class Reanchored(Aggregate.Event):
        start_line: int
        end_line: int
        status: str
        confidence: float
        reason: str
        file_digest: str
        occurrences: int
        texts: dict[str, Any]
        at: str

    class Orphaned(Aggregate.Event):
        reason: str
        checked_digest: str | None
        at: str

    class SensitivityLowered(Aggregate.Event):
        from_sensitivity: str
        to_sensitivity: str
        by: str
        at: str

    class Deleted(Aggregate.Event):
        at: str
    id: UUID  # annotated so that create() may pass the id it derives (eventsourcing then accepts `id=`)

    @classmethod
    def create(cls, *, file_path: str, anchor: Anchor, comment: str, at: datetime, tags: Iterable[str] = (),
               priority: str = DEFAULT_PRIORITY, sensitivity: str = "public", client_key: str | None = None,
               sealer: Sealer | None = None, entropy: int | None = None) -> Annotation:
        """A new annotation on `anchor` (captured by the handler from the file's current text)."""
        check_anchor(anchor)
        request = _request(file_path, anchor.start_line, anchor.end_line, comment, tags, priority, sensitivity)
        texts: dict[str, Any] = {k: getattr(anchor, k) for k in _ANCHOR_TEXTS}
        if sensitivity == "secret" or _bears_credential(sealer, {"comment": request["comment"], **texts}):
            payload = {"comment": request["comment"], **texts}
            sealed, digest, salt = _seal(sealer, payload)
            request_digest = sha256_hex(canonical_json({**request, "salt": salt}))
            comment_in_event: str | None = None
            texts = dict.fromkeys(_ANCHOR_TEXTS)
        else:
            sealed, digest, comment_in_event = None, None, request["comment"]
            request_digest = sha256_hex(canonical_json(request))
        # eventsourcing's metaclass takes `id=` because the class annotates `id`; __init__ (the event's) has none
        return cls(  # type: ignore[call-arg]
            id=annotation_uuid(at, client_key, entropy), file_path=request["file_path"],
            start_line=anchor.start_line, end_line=anchor.end_line, comment=comment_in_event, tags=request["tags"],
            priority=priority, sensitivity=sensitivity, **texts, file_digest=anchor.file_digest,
            occurrences=anchor.occurrences, sealed=sealed, digest=digest, request_digest=request_digest,
            at=_iso(at),
        )

    @event(Annotated)
    def __init__(self, file_path: str, start_line: int, end_line: int, comment: str | None, tags: list[str],
                 priority: str, sensitivity: str, selected_text: str | None, context_before: str | None,
                 context_after: str | None, file_digest: str, occurrences: int, sealed: str | None,
                 digest: str | None, request_digest: str, at: str) -> None:
        self.file_path = file_path
        self.start_line, self.end_line = start_line, end_line
        self.comment = comment
        self.tags = list(tags)
        self.priority = priority
        self.sensitivity = sensitivity
        self.selected_text, self.context_before, self.context_after = selected_text, context_before, context_after
        self.file_digest = file_digest
        self.occurrences = occurrences
        self.sealed, self.digest = sealed, digest
        self.created_sealed = sealed
        self.request_digest = request_digest
        self.created_at = self.updated_at = at
        self.status, self.confidence, self.reason = "exact", 1.0, "annotated"
        self.orphaned_against: str | None = None  # the file digest an orphaned anchor was last checked on
        self.deleted = False

    @staticmethod
    def id_for_key(client_key: str) -> UUID:
        """The id a create with this idempotency key gets: load it first to answer a repeat."""
        return natural_id("annotation", check_client_key(client_key))

    @property
    def sealed_texts(self) -> bool:
        """Whether the log holds this annotation's texts sealed (a secret one, or one bearing a credential)."""
        return self.sealed is not None

    # reading

    @property
    def ann_id(self) -> str:
        return format_ann_id(self.id)

    @property
    def secret(self) -> bool:
        return self.sensitivity == "secret"

    def check_live(self) -> None:
        if self.deleted:
            raise Code3Error(Code.NOT_FOUND, f"annotation {self.ann_id} was deleted", "list the annotations")

    def _opened(self, sealer: Sealer | None, sealed: str | None = None) -> dict[str, Any]:
        """The secret payload, checked against its digest (for the current one)."""
        sealed = self.sealed if sealed is None else sealed
        text = _need_sealer(sealer).open(sealed or "")
        if sealed == self.sealed and sha256_hex(text) != self.digest:
            raise Code3Error(Code.INTERNAL, "a sealed annotation failed its digest check", "restore the keystore")
        return json.loads(text)

    def texts(self, sealer: Sealer | None = None) -> dict[str, str]:
        """comment, selected_text, context_before and context_after in clear (opened when sealed)."""
        if self.sealed_texts:
            opened = self._opened(sealer)
            return {k: opened[k] for k in ("comment", *_ANCHOR_TEXTS)}
        return {"comment": self.comment or "", "selected_text": self.selected_text or "",
                "context_before": self.context_before or "", "context_after": self.context_after or ""}

    def anchor(self, sealer: Sealer | None = None) -> Anchor:
        t = self.texts(sealer)
        return Anchor(self.start_line, self.end_line, t["selected_text"], t["context_before"], t["context_after"],
                      self.file_digest, self.occurrences)

    def view(self, sealer: Sealer | None = None, reveal: bool = False) -> dict[str, Any]:
        """The seed's Annotation shape (plus the anchor's state). A secret one shows no comment unless
        `reveal` (for the owner's CLI, never for MCP or REST); a sealed one shows none without the sealer."""
        hidden = (self.secret and not reveal) or (self.sealed_texts and sealer is None)
        comment = None if hidden else self.texts(sealer)["comment"]
        return {
            "id": self.ann_id, "filePath": self.file_path, "startLine": self.start_line, "endLine": self.end_line,
            "comment": comment, "tags": list(self.tags), "priority": self.priority,
            "sensitivity": self.sensitivity, "createdAt": self.created_at, "updatedAt": self.updated_at,
            "anchor": {"status": self.status, "confidence": self.confidence, "reason": self.reason},
        }

    def is_repeat_of(self, *, file_path: str, start_line: int, end_line: int, comment: str,
                     tags: Iterable[str] = (), priority: str = DEFAULT_PRIORITY, sensitivity: str = "public",
                     sealer: Sealer | None = None) -> bool:
        """Whether a create with the same client key asked for what created this annotation."""
        request = _request(file_path, start_line, end_line, comment, tags, priority, sensitivity)
        if self.created_sealed is not None:
            request["salt"] = self._opened(sealer, self.created_sealed)["salt"]
        return sha256_hex(canonical_json(request)) == self.request_digest

    # commands

    def edit(self, *, at: datetime, comment: str | None = None, tags: Iterable[str] | None = None,
             priority: str | None = None, sensitivity: str | None = None, anchor: Anchor | None = None,
             sealer: Sealer | None = None) -> bool:
        """Change what is given (None keeps it); `anchor` re-targets the range (captured by the handler).
        Records Edited, or nothing when nothing changes."""
        self.check_live()
        changes: dict[str, Any] = {}
        if tags is not None and (new_tags := check_tags(tags)) != self.tags:
            changes["tags"] = new_tags
        if priority is not None and check_priority(priority) != self.priority:
            changes["priority"] = priority
        target = self.sensitivity if sensitivity is None else check_sensitivity(sensitivity)
        if RANK[target] < RANK[self.sensitivity]:
            raise invalid(f"a sensitivity can only rise here: {self.sensitivity} cannot become {target}",
                          f"lowering is the owner's act on the project's machine: code3 loom lower {self.ann_id} "
                          f"--to {target}")
        if target == "secret" and not self.secret:
            raise invalid("an annotation whose text is already in the log in clear cannot become secret",
                           "create a new annotation with sensitivity secret (and delete this one); "
                           "this one's earlier text stays in the log's history")
        if target != self.sensitivity:
            changes["sensitivity"] = target
        if anchor is not None:
            check_anchor(anchor)
            if (anchor.start_line, anchor.end_line) != (self.start_line, self.end_line):
                changes.update(start_line=anchor.start_line, end_line=anchor.end_line)
        if comment is not None:
            check_comment(comment)
        old = self.texts(sealer) if (self.sealed_texts or anchor is not None or comment is not None) else {}
        new = dict(old)
        if comment is not None:
            new["comment"] = comment
        if anchor is not None:
            new.update({k: getattr(anchor, k) for k in _ANCHOR_TEXTS})
            if anchor.file_digest != self.file_digest or anchor.occurrences != self.occurrences:
                changes.update(file_digest=anchor.file_digest, occurrences=anchor.occurrences)
        if new != old or "sensitivity" in changes:
            changes.update(self._text_fields(new, target, sealer))
        if anchor is not None and ({"start_line", "file_digest", "selected_text", "sealed"} & changes.keys()
                                   or self.status == "orphaned"):
            # re-targeted by a person: anchored exactly where they said
            changes.update(status="exact", confidence=1.0, reason="re-targeted", orphaned_against=None)
        if not changes:
            return False
        self._edited(changes=changes, at=_iso(at))
        return True

    def locate(self, text: str | None, sealer: Sealer | None = None,
               find: Callable[[Anchor, str | None], AnchorResult] = reanchor) -> AnchorResult:
        """Where the annotated lines are in the file's current text, recording nothing (for read tools,
        which show the current best anchor; they pass a budgeted `find`, which may answer `stale`). An
        orphaned anchor already checked on this text stays so."""
        if self.status == "orphaned" and text is not None and self.orphaned_against == file_digest(text):
            return AnchorResult("orphaned", None, None, 0.0, self.reason)
        return find(self.anchor(sealer), text)

    def verify(self, text: str | None, *, at: datetime, sealer: Sealer | None = None) -> AnchorResult:
        """Re-anchor on the file's current text and record the outcome (`code3 loom verify`, the worker)."""
        result = self.locate(text, sealer)
        self.follow(result, text, at=at, sealer=sealer)
        return result

    def stitch_item(self, text: str | None, sealer: Sealer | None = None,
                    find: Callable[[Anchor, str | None], AnchorResult] = reanchor) -> StitchItem:
        """This annotation as stitch takes it, its snippet from the file's current text at the current
        best anchor. A secret one is never opened: stitch gets its place only."""
        if self.secret:
            return StitchItem(id=self.ann_id, file_path=self.file_path, start_line=self.start_line,
                              end_line=self.end_line, comment="", priority=self.priority, sensitivity="secret",
                              snippet=None, tags=(), status=self.status)
        where = self.locate(text, sealer, find)
        start, end, snippet = self.start_line, self.end_line, None
        if where.found:
            start = present(where.start_line, "a found anchor's start line")
            end = present(where.end_line, "a found anchor's end line")
            snippet = snippet_at(text, start, end) if text is not None else None
        return StitchItem(id=self.ann_id, file_path=self.file_path, start_line=start, end_line=end,
                          comment=self.texts(sealer)["comment"], priority=self.priority,
                          sensitivity=self.sensitivity, snippet=snippet, tags=tuple(self.tags), status=where.status)

    def follow(self, result: AnchorResult, text: str | None, *, at: datetime, sealer: Sealer | None = None) -> bool:
        """Record where re-anchoring found the lines in the file's current `text` (None: file gone):
        Reanchored (the anchor follows the text there) or Orphaned; nothing when nothing changed (nor for a
        `stale` result: a read's, which did not search)."""
        self.check_live()
        if result.status == "stale":
            return False
        if not result.found:
            checked = file_digest(text) if text is not None else None
            if self.status == "orphaned" and self.orphaned_against == checked and self.reason == result.reason:
                return False
            self._orphaned(reason=result.reason, checked_digest=checked, at=_iso(at))
            return True
        assert text is not None and result.start_line is not None and result.end_line is not None
        found = Anchor.capture(text, result.start_line, result.end_line)
        if self.status != "orphaned" and found == self.anchor(sealer):
            return False  # already anchored right there (the last outcome's status stays as it was)
        texts = {k: getattr(found, k) for k in _ANCHOR_TEXTS}
        if self.sealed_texts or _bears_credential(sealer, texts):
            texts = {"comment": self.texts(sealer)["comment"], **texts}
        self._reanchored(start_line=found.start_line, end_line=found.end_line, status=result.status,
                         confidence=result.confidence, reason=result.reason, file_digest=found.file_digest,
                         occurrences=found.occurrences, texts=self._text_fields(texts, self.sensitivity, sealer),
                         at=_iso(at))
        return True

    def lower(self, *, to: str, by: str, at: datetime) -> bool:
        """Lower the sensitivity to `to`: the owner's act (`code3 loom lower`), never reachable over MCP or
        REST. Records SensitivityLowered naming `by`; the texts stay as the log holds them (a sealed one stays
        sealed: lowering writes no text). Lowering to the current level records nothing."""
        self.check_live()
        check_sensitivity(to)
        if to == self.sensitivity:
            return False
        if RANK[to] > RANK[self.sensitivity]:
            raise invalid(f"{to} is not lower than {self.sensitivity}", "raise a sensitivity with edit")
        if not isinstance(by, str) or not by.strip() or len(by) > 200:
            raise invalid("who lowers the sensitivity is not named", "run it as a named identity")
        self._lowered(from_sensitivity=self.sensitivity, to_sensitivity=to, by=by, at=_iso(at))
        return True

    def delete(self, *, at: datetime) -> bool:
        """Deleted (the history stays in the log); a second delete records nothing."""
        if self.deleted:
            return False
        self._deleted(at=_iso(at))
        return True

    def _text_fields(self, texts: dict[str, Any], sensitivity: str, sealer: Sealer | None) -> dict[str, Any]:
        """The text fields as an event carries them: in clear, or sealed with a digest (a secret one, one
        sealed before, or texts bearing a credential; the clear fields are then emptied)."""
        if sensitivity == "secret" or self.sealed_texts or _bears_credential(sealer, texts):
            payload = {k: texts.get(k, self.texts(sealer)[k]) for k in ("comment", *_ANCHOR_TEXTS)}
            sealed, digest, _ = _seal(sealer, payload)
            clear = {} if self.sealed_texts else dict.fromkeys(("comment", *_ANCHOR_TEXTS))
            return {**clear, "sealed": sealed, "digest": digest}
        return {k: v for k, v in texts.items() if v != getattr(self, k)}

    # events

    @event(Edited)
    def _edited(self, changes: dict[str, Any], at: str) -> None:
        for key, value in changes.items():
            setattr(self, key, value)
        self.updated_at = at

    @event(Reanchored)
    def _reanchored(self, start_line: int, end_line: int, status: str, confidence: float, reason: str,
                    file_digest: str, occurrences: int, texts: dict[str, Any], at: str) -> None:
        self.start_line, self.end_line = start_line, end_line
        self.status, self.confidence, self.reason = status, confidence, reason
        self.file_digest, self.occurrences = file_digest, occurrences
        self.orphaned_against = None
        for key, value in texts.items():
            setattr(self, key, value)
        self.updated_at = at

    @event(Orphaned)
    def _orphaned(self, reason: str, checked_digest: str | None, at: str) -> None:
        """The anchor is kept as it was (a later version of the file may hold the text again)."""
        self.status, self.confidence, self.reason = "orphaned", 0.0, reason
        self.orphaned_against = checked_digest
        self.updated_at = at

    @event(SensitivityLowered)
    def _lowered(self, from_sensitivity: str, to_sensitivity: str, by: str, at: str) -> None:
        self.sensitivity = to_sensitivity
        self.lowered_from, self.lowered_by = from_sensitivity, by
        self.updated_at = at

    @event(Deleted)
    def _deleted(self, at: str) -> None:
        self.deleted = True
        self.updated_at = at


def _request(file_path: str, start_line: int, end_line: int, comment: str, tags: Iterable[str], priority: str,
             sensitivity: str) -> dict[str, Any]:
    check_range(start_line, end_line)
    return {"file_path": check_path(file_path), "start_line": start_line, "end_line": end_line,
            "comment": check_comment(comment), "tags": check_tags(tags), "priority": check_priority(priority),
            "sensitivity": check_sensitivity(sensitivity)}
