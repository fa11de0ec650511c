"""The Annotation aggregate: ids, rules, edits, re-anchoring events, and secrets that never reach the log in clear."""

from __future__ import annotations

import json
import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from eventsourcing.application import Application
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.sealing import CredentialSealer
from adapters.secret_box import SecretBox
from domain.canonical import sha256_hex
from domain.errors import Code3Error
from domain.knowledge.anchor import Anchor, reanchor
from domain.knowledge.annotation import (
    MAX_COMMENT_CHARS,
    MAX_LINES,
    MAX_QUOTE_CHARS,
    MAX_TAGS,
    Annotation,
    annotation_uuid,
    format_ann_id,
    parse_ann_id,
)

T0 = datetime(2024, 10, 14, 9, 12, tzinfo=UTC)
SOURCE = "\n".join(f"line {i}: value_{i} = compute({i})" for i in range(1, 41)) + "\n"
SECRET = "SECRET-MARKER-7f3a"


def code(call) -> str:
    with pytest.raises(Code3Error) as caught:
        call()
    return caught.value.code.value


def new(text: str = SOURCE, start: int = 12, end: int = 14, **kw) -> Annotation:
    args = dict(file_path="src/api/tree.ts", anchor=Anchor.capture(text, start, end), comment="paginate the tree",
                at=T0, tags=["perf"])
    return Annotation.create(**{**args, **kw})


def app() -> Application:
    return Application(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})


def stored_bytes(application: Application) -> bytes:
    return b"".join(n.state for n in application.recorder.select_notifications(start=1, limit=1000))


def event_names(a: Annotation) -> list[str]:
    return [type(e).__name__ for e in a.collect_events()]


@pytest.fixture
def box(tmp_path: Path) -> SecretBox:
    return SecretBox(tmp_path / "keys")


@pytest.fixture
def secret_box(box: SecretBox) -> SecretBox:
    return box


def secret_source() -> str:
    lines = SOURCE.split("\n")
    lines[12] = f"    password = '{SECRET}-in-code'"
    return "\n".join(lines)


# ids


def test_ids_are_ann_and_26_crockford_characters_that_map_back_to_the_aggregate() -> None:
    a = new()
    assert a.ann_id.startswith("ann_") and len(a.ann_id) == 30
    assert parse_ann_id(a.ann_id) == a.id and format_ann_id(a.id) == a.ann_id


def test_ids_without_a_client_key_are_time_ordered() -> None:
    earlier = format_ann_id(annotation_uuid(T0))
    later = format_ann_id(annotation_uuid(T0 + timedelta(milliseconds=1)))
    assert earlier < later


def test_a_client_key_gives_the_same_id_so_a_repeated_create_collides() -> None:
    first = new(client_key="req-1")
    again = new(client_key="req-1", at=T0 + timedelta(seconds=5))
    assert first.id == again.id == Annotation.id_for_key("req-1") != new(client_key="req-2").id
    application = app()
    application.save(first)
    with pytest.raises(Exception):  # noqa: B017 - the store refuses a second version 1 of the same aggregate
        application.save(again)


def test_malformed_ids_and_keys_are_validation_errors() -> None:
    valid = format_ann_id(annotation_uuid(T0))
    assert parse_ann_id(valid)
    for bad in ("ann_", valid[:-1], valid + "0", "ann_8" + valid[5:], valid[:-1] + "I", valid[:-1] + "U",
                valid.lower(), "ANN_" + valid[4:], 12, None):
        assert code(lambda b=bad: parse_ann_id(b)) == "E_VALIDATION"
    for key in ("", "has space", "x" * 129, "caf\u00e9"):
        assert code(lambda k=key: new(client_key=k)) == "E_VALIDATION"


# rules


def test_the_seed_fields_with_priority_p1_by_default() -> None:
    view = new().view()
    assert view == {
        "id": view["id"], "filePath": "src/api/tree.ts", "startLine": 12, "endLine": 14,
        "comment": "paginate the tree", "tags": ["perf"], "priority": "P1", "sensitivity": "public",
        "createdAt": "2024-10-14T09:12:00.000Z", "updatedAt": "2024-10-14T09:12:00.000Z",
        "anchor": {"status": "exact", "confidence": 1.0, "reason": "annotated"},
    }


@pytest.mark.parametrize("kw", [
    {"comment": ""}, {"comment": "   "}, {"comment": "x" * (MAX_COMMENT_CHARS + 1)}, {"comment": "a\x00b"},
    {"tags": ["Perf"]}, {"tags": ["a"]}, {"tags": ["has space"]}, {"tags": "perf"},
    {"tags": [f"t{i:02d}" for i in range(MAX_TAGS + 1)]},
    {"priority": "P3"}, {"priority": "p0"}, {"sensitivity": "private"},
    {"file_path": "/etc/passwd"}, {"file_path": "../x.py"}, {"file_path": "a//b.py"}, {"file_path": "a\\b.py"},
    {"file_path": ""}, {"file_path": "a\nb.py"}, {"file_path": "x" * 1025},
])
def test_invalid_inputs_are_refused(kw) -> None:
    assert code(lambda: new(**kw)) == "E_VALIDATION"


def test_a_comment_at_the_limit_and_repeated_tags_are_fine() -> None:
    a = new(comment="x" * MAX_COMMENT_CHARS, tags=["perf", "api", "perf"])
    assert a.tags == ["perf", "api"]


def test_an_annotation_covers_at_most_max_lines_and_max_quote_chars() -> None:
    big = "\n".join(f"l{i}" for i in range(MAX_LINES + 5)) + "\n"
    assert new(big, 1, MAX_LINES).end_line == MAX_LINES
    assert code(lambda: new(big, 1, MAX_LINES + 1)) == "E_VALIDATION"
    wide = "x" * (MAX_QUOTE_CHARS + 1) + "\n"
    assert code(lambda: new(wide, 1, 1)) == "E_VALIDATION"


# commands and events


def test_create_records_annotated_with_the_anchor() -> None:
    a = new()
    [created] = a.collect_events()
    assert type(created).__name__ == "Annotated"
    assert created.selected_text == "\n".join(SOURCE.split("\n")[11:14]) and created.comment == "paginate the tree"
    assert created.context_before and created.context_after and len(created.file_digest) == 64


def test_edit_records_only_what_changed_and_nothing_when_nothing_did() -> None:
    a = new()
    a.collect_events()
    assert not a.edit(at=T0, comment="paginate the tree", tags=["perf"], priority="P1")
    assert a.edit(at=T0 + timedelta(minutes=1), comment="stream it", priority="P0")
    [edited] = a.collect_events()
    assert type(edited).__name__ == "Edited"
    assert edited.changes == {"priority": "P0", "comment": "stream it"}
    assert a.view()["updatedAt"] == "2024-10-14T09:13:00.000Z" and a.view()["createdAt"] == "2024-10-14T09:12:00.000Z"


def test_edit_can_retarget_the_range_and_an_orphaned_anchor_is_anchored_again() -> None:
    a = new()
    lines = SOURCE.split("\n")
    gone = "\n".join(lines[:11] + lines[14:])
    a.verify(gone, at=T0)
    assert a.status == "orphaned"
    assert a.edit(at=T0, anchor=Anchor.capture(gone, 20, 22))
    assert (a.start_line, a.end_line, a.status, a.reason) == (20, 22, "exact", "re-targeted")
    assert a.anchor().selected_text.startswith("line 23:")
    assert a.locate(gone).status == "exact"


def test_a_deleted_annotation_refuses_commands_and_a_second_delete_is_a_no_op() -> None:
    a = new()
    assert a.delete(at=T0)
    assert not a.delete(at=T0)
    assert code(lambda: a.edit(at=T0, comment="x")) == "E_NOT_FOUND"
    assert event_names(a) == ["Annotated", "Deleted"]


def test_a_repeat_of_the_create_is_recognised_and_a_different_one_is_not() -> None:
    a = new(client_key="k")
    same = dict(file_path="src/api/tree.ts", start_line=12, end_line=14, comment="paginate the tree", tags=["perf"])
    assert a.is_repeat_of(**same)
    assert not a.is_repeat_of(**{**same, "comment": "other"})
    a.edit(at=T0, comment="changed later")
    assert a.is_repeat_of(**same), "a retry of the original create still matches after later edits"


# re-anchoring outcomes as events


def test_follow_records_reanchored_and_the_anchor_follows_the_text() -> None:
    a = new()
    a.collect_events()
    edited = "# new header\n# another\n" + SOURCE
    assert a.follow(reanchor(a.anchor(), edited), edited, at=T0)
    [ev] = a.collect_events()
    assert type(ev).__name__ == "Reanchored" and (ev.start_line, ev.end_line, ev.status) == (14, 16, "moved")
    assert a.anchor().file_digest == sha256_hex(edited)
    assert not a.follow(reanchor(a.anchor(), edited), edited, at=T0), "the same file again records nothing"


def test_orphaned_once_per_file_version_and_the_anchor_is_kept_for_later() -> None:
    a = new()
    lines = SOURCE.split("\n")
    gone = "\n".join(lines[:11] + lines[14:])
    assert a.follow(reanchor(a.anchor(), gone), gone, at=T0)
    assert a.status == "orphaned" and (a.start_line, a.end_line) == (12, 14)
    assert not a.follow(reanchor(a.anchor(), gone), gone, at=T0)
    assert reanchor(a.anchor(), gone).status == "orphaned", "the stored digest is not the orphaning file's"
    assert a.follow(reanchor(a.anchor(), SOURCE), SOURCE, at=T0), "the text came back"
    assert a.status == "exact"
    assert event_names(a) == ["Annotated", "Orphaned", "Reanchored"]


def test_a_missing_file_orphans_the_annotation() -> None:
    a = new()
    assert a.follow(reanchor(a.anchor(), None), None, at=T0) and a.status == "orphaned"


def test_replay_from_the_store_gives_the_same_annotation() -> None:
    application = app()
    a = new()
    a.edit(at=T0, tags=["perf", "api"])
    edited = "x\n" + SOURCE
    a.follow(reanchor(a.anchor(), edited), edited, at=T0)
    application.save(a)
    again = application.repository.get(a.id)
    assert again.view() == a.view() and again.anchor() == a.anchor()


def test_verify_records_the_outcome_and_locate_records_nothing() -> None:
    a = new()
    a.collect_events()
    edited = "# header\n" + SOURCE
    seen = a.locate(edited)
    assert (seen.status, seen.start_line) == ("moved", 13) and a.collect_events() == []
    assert a.verify(edited, at=T0).start_line == 13
    assert event_names(a) == ["Reanchored"]
    a.verify(edited, at=T0)
    assert a.collect_events() == [], "verifying the same text again records nothing"


def test_stitch_item_takes_the_snippet_from_the_current_text_at_the_current_anchor() -> None:
    a = new(priority="P0")
    edited = "# header\n" + SOURCE
    item = a.stitch_item(edited)
    assert (item.start_line, item.end_line, item.status, item.priority) == (13, 15, "moved", "P0")
    assert item.snippet == "\n".join(SOURCE.split("\n")[11:14]) and item.comment == "paginate the tree"
    lines = SOURCE.split("\n")
    assert a.stitch_item("\n".join(lines[:11] + lines[14:])).snippet is None


def test_a_secret_stitch_item_carries_nothing_but_its_place(box: SecretBox) -> None:
    a = new(secret_source(), 13, 13, comment=SECRET, sensitivity="secret", sealer=box)
    item = a.stitch_item(secret_source())
    assert item.comment == "" and item.snippet is None and item.tags == ()
    assert SECRET not in repr(item)


# secrets


def test_a_secret_annotation_never_puts_its_comment_or_code_in_the_log(box: SecretBox) -> None:
    application = app()
    text = secret_source()
    a = new(text, 13, 13, comment=f"rotate {SECRET}", sensitivity="secret", sealer=box)
    a.edit(at=T0, comment=f"rotate {SECRET} today", sealer=box)
    moved = "# inserted\n" + text
    a.follow(reanchor(a.anchor(box), moved), moved, at=T0, sealer=box)
    application.save(a)
    log = stored_bytes(application)
    assert SECRET.encode() not in log and b"password" not in log
    assert b"aead1:" in log
    again = application.repository.get(a.id)
    assert again.texts(box)["comment"] == f"rotate {SECRET} today"
    assert again.anchor(box).selected_text == f"    password = '{SECRET}-in-code'"
    assert again.start_line == 14
    assert again.view()["comment"] is None and again.view(box, reveal=True)["comment"].startswith("rotate")


def test_the_sealed_payload_matches_its_digest_and_a_tampered_one_is_refused(box: SecretBox) -> None:
    a = new(secret_source(), 13, 13, comment=SECRET, sensitivity="secret", sealer=box)
    assert sha256_hex(box.open(a.sealed)) == a.digest
    assert "salt" in json.loads(box.open(a.sealed)), "a salt keeps the digest of a short secret unguessable"
    a.sealed = box.seal(json.dumps({"comment": "swapped"}))
    assert code(lambda: a.texts(box)) == "E_INTERNAL"


def test_a_secret_needs_the_sealer() -> None:
    assert code(lambda: new(comment=SECRET, sensitivity="secret")) == "E_INTERNAL"


def test_a_public_annotation_cannot_become_secret_and_edit_never_lowers(box: SecretBox) -> None:
    public = new()
    assert code(lambda: public.edit(at=T0, sensitivity="secret", sealer=box)) == "E_VALIDATION"
    secret = new(comment="stays sealed", sensitivity="secret", sealer=box)
    internal = new(comment="team only", sensitivity="internal", sealer=box)
    for a, lower in ((secret, "public"), (secret, "internal"), (internal, "public")):
        a.collect_events()
        with pytest.raises(Code3Error) as refused:
            a.edit(at=T0, sensitivity=lower, comment="changed too", sealer=box)
        assert refused.value.code.value == "E_VALIDATION" and "code3 loom lower" in refused.value.hint
        assert a.collect_events() == [] and a.sensitivity != lower
    assert internal.edit(at=T0, sensitivity="internal", priority="P0", sealer=box), "the same level is no lowering"


def test_lower_is_recorded_with_who_and_a_sealed_text_stays_sealed(box: SecretBox) -> None:
    application = app()
    a = new(secret_source(), 13, 13, comment=f"rotate {SECRET}", sensitivity="secret", sealer=box)
    assert a.lower(to="public", by="alice (cli, user me)", at=T0)
    application.save(a)
    [*_, lowered] = application.repository.event_store.get(a.id)
    assert type(lowered).__name__ == "SensitivityLowered"
    assert (lowered.from_sensitivity, lowered.to_sensitivity) == ("secret", "public")
    assert lowered.by == "alice (cli, user me)"
    assert SECRET.encode() not in stored_bytes(application), "lowering writes no text to the log"
    again = application.repository.get(a.id)
    assert again.sensitivity == "public" and again.view(box)["comment"] == f"rotate {SECRET}"
    assert again.lowered_from == "secret", "what the owner's answer says it was lowered from"
    assert again.view()["comment"] is None, "without the sealer a sealed text is not shown"
    assert not again.lower(to="public", by="x", at=T0)
    assert code(lambda: again.lower(to="secret", by="x", at=T0)) == "E_VALIDATION"
    assert code(lambda: new(sensitivity="internal").lower(to="public", by=" ", at=T0)) == "E_VALIDATION"


def test_a_text_bearing_a_credential_is_sealed_whatever_the_sensitivity(secret_box: SecretBox) -> None:
    box = CredentialSealer(secret_box)
    token = "ghp_" + "A1b2C3d4" * 5
    text = SOURCE.replace("line 13: value_13 = compute(13)", f"GITHUB_TOKEN = '{token}'")
    application = app()
    a = new(text, 12, 14, sealer=box)
    assert a.sensitivity == "public" and a.sealed_texts and a.selected_text is None
    assert token in a.anchor(box).selected_text and a.view(box)["comment"] == "paginate the tree"
    moved = "# inserted\n" + text
    assert a.follow(reanchor(a.anchor(box), moved), moved, at=T0, sealer=box) and a.start_line == 13
    a.edit(at=T0, comment="rotate it", sealer=box)
    plain = new(SOURCE, 1, 1, sealer=box)
    assert not plain.sealed_texts
    plain.edit(at=T0, comment=f"the key is AKIA{'Z' * 16}", sealer=box)
    assert plain.sealed_texts and plain.comment is None
    application.save(a, plain)
    log = stored_bytes(application)
    assert token.encode() not in log and b"AKIA" not in log
    assert application.repository.get(plain.id).texts(box)["comment"].startswith("the key is AKIA")


def test_a_secret_repeat_of_create_is_recognised_with_the_sealer(box: SecretBox) -> None:
    a = new(comment=SECRET, sensitivity="secret", sealer=box, client_key="k")
    same = dict(file_path="src/api/tree.ts", start_line=12, end_line=14, comment=SECRET, tags=["perf"],
                sensitivity="secret", sealer=box)
    assert a.is_repeat_of(**same)
    assert not a.is_repeat_of(**{**same, "comment": "guess"})
    assert SECRET not in a.request_digest


# the AES-GCM sealer


def test_the_key_file_is_created_0600_in_a_0700_directory(tmp_path: Path) -> None:
    box = SecretBox(tmp_path / "ks" / "nested")
    assert not box.path.exists(), "nothing is created before first use"
    assert box.open(box.seal("hello")) == "hello"
    assert stat.S_IMODE(box.path.stat().st_mode) == 0o600 and box.path.stat().st_size == 32
    assert stat.S_IMODE(box.path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "ks").stat().st_mode) == 0o700


def test_sealing_twice_gives_different_texts_that_both_open(box: SecretBox) -> None:
    one, two = box.seal(SECRET), box.seal(SECRET)
    assert one != two and SECRET not in one and box.open(one) == box.open(two) == SECRET


def test_two_boxes_on_one_keystore_share_the_key(tmp_path: Path) -> None:
    assert SecretBox(tmp_path).open(SecretBox(tmp_path).seal("x")) == "x"


def test_another_key_or_a_damaged_text_does_not_open_and_says_nothing_of_it(tmp_path: Path) -> None:
    sealed = SecretBox(tmp_path / "a").seal(SECRET)
    other = SecretBox(tmp_path / "b")
    for bad in (sealed, sealed[:-4] + "AAAA", "aead1:!!", "plain", ""):
        with pytest.raises(Code3Error) as caught:
            other.open(bad)
        assert caught.value.code.value == "E_PRECONDITION" and SECRET not in str(caught.value.as_dict())


def test_a_loose_linked_or_damaged_key_file_is_refused_never_adopted(tmp_path: Path) -> None:
    box = SecretBox(tmp_path)
    box.seal("x")
    os.chmod(box.path, 0o644)
    assert code(lambda: SecretBox(tmp_path).seal("y")) == "E_PRECONDITION"
    assert stat.S_IMODE(box.path.stat().st_mode) == 0o644, "a loose key is refused, not silently tightened"
    os.chmod(box.path, 0o600)
    assert SecretBox(tmp_path).open(box.seal("y")) == "y"
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "annotations.aead.key").symlink_to(box.path)
    assert code(lambda: SecretBox(planted).seal("z")) == "E_PRECONDITION"
    box.path.write_bytes(b"short")
    assert code(lambda: SecretBox(tmp_path).seal("z")) == "E_PRECONDITION"


@st.composite
def secret_histories(draw):
    marker = "S" + draw(st.text(alphabet="0123456789abcdef", min_size=12, max_size=12)) + "Z"
    ops = draw(st.lists(st.sampled_from(["comment", "tags", "priority", "move", "edit_line", "gone", "back"]),
                        max_size=8))
    return marker, ops


@settings(deadline=None)
@given(history=secret_histories())
def test_no_history_of_a_secret_annotation_puts_its_text_in_the_log(tmp_path_factory, history) -> None:
    marker, ops = history
    box = SecretBox(tmp_path_factory.mktemp("keys"))
    lines = SOURCE.split("\n")
    lines[12] = f"    token = '{marker}-code'"
    text = "\n".join(lines)
    a = new(text, 12, 14, comment=f"{marker}-note", sensitivity="secret", sealer=box)
    for i, op in enumerate(ops):
        at = T0 + timedelta(seconds=i + 1)
        if op == "comment":
            a.edit(at=at, comment=f"{marker}-note {i}", sealer=box)
        elif op == "tags":
            a.edit(at=at, tags=[f"t{i}x"], sealer=box)
        elif op == "priority":
            a.edit(at=at, priority=["P0", "P1", "P2"][i % 3], sealer=box)
        elif op == "move":
            text = "# moved down\n" + text
        elif op == "edit_line":
            text = text.replace(f"{marker}-code'", f"{marker}-code2'")
        elif op == "gone":
            text = "\n".join(x for x in text.split("\n") if marker not in x)
        else:
            text = "\n".join(lines)
        a.verify(text, at=at, sealer=box)
    application = app()
    application.save(a)
    log = stored_bytes(application)
    assert marker.encode() not in log
    assert application.repository.get(a.id).texts(box)["comment"].startswith(f"{marker}-note")
