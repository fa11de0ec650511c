"""A feature's claim on its publish's terms, and the one way it is released.

The first publish of a feature claims it (`Index` publish: feature id → issue_hash); other terms are refused,
except when the chain refused that publish's bounty after its issue opened (the Issue is `Unfunded`): the claim
is then released, and the next publish of the feature takes it over with the same forge issue
(docs/design.md, "Idempotency keys").
"""

from __future__ import annotations

from adapters.event_store import Change
from domain.bounties.amounts import display
from domain.bounties.bounty import Bounty
from domain.bounties.contract import STATUS_LABELS, Status, state_label
from domain.bounties.index import Index
from domain.bounties.issue import Issue
from domain.bounties.metadata import UNFUNDED_LABEL
from domain.errors import Code, Code3Error, present
from mcp_tools.lifecycle.chain_record import chain_read, lookup
from mcp_tools.services import Services


def released_claim(s: Services, feature_id: str, key: str) -> str | None:
    """The issue_hash of an unfunded publish of this feature whose claim this publish may take over, if any: the
    chain refused its bounty (checked afresh: a create the node answered with an error may have committed after
    all, and then that publish is resumed with its own terms, never doubled). A claim that stands (a bounty
    escrowed, or a publish not finished) refuses these other terms, saying which publish holds it."""
    claimed = lookup(s, "publish", feature_id)
    if claimed is None or claimed == key:
        return None
    old = s.store.get(Issue, Issue.create_id(claimed))
    if old is None:
        return None  # a claim without its Issue cannot be saved (one unit of work): index_change decides
    if not old.releasable:
        terms = f"{display(old.amount, old.asset)}, spec {old.spec_digest[:12]}…"
        if old.bounty_id is not None:
            raise Code3Error(Code.IDEMPOTENT_REJECTED, f"feature {feature_id} was already published as "
                             f"{old.url or old.issue_hash} (bounty {old.bounty_id}, {terms}) with other terms",
                             "reuse the existing issue and bounty; a changed spec or amount is a new feature_id")
        raise Code3Error(Code.IDEMPOTENT_REJECTED, f"feature {feature_id} has a publish with other terms ({terms}) "
                         "that has not finished", "repeat that publish with its original amount and spec to resume "
                         "it; if the chain then refuses its bounty, the issue is marked unfunded and a publish with "
                         "new terms reuses it")
    with chain_read():
        escrowed = s.chain.find_bounty_by_issue_hash(s.signer.address, claimed)
    if escrowed is not None:
        raise Code3Error(Code.IDEMPOTENT_REJECTED,
                         f"feature {feature_id}'s earlier publish ({old.url}) was marked unfunded, but its bounty "
                         f"{escrowed.bounty_id} is on chain after all",
                         "repeat that publish with its original amount and terms: it links the bounty and reopens "
                         "the issue")
    return claimed


def repointed(kind: str, key: str, target: str, previous: str) -> Change[Index]:
    return Change.step(Index, Index.create_id(kind, key), lambda index: index.repoint_once(target, previous),
                       what=f"the {kind} lookup of {key}")


def refuse_superseded(s: Services, issue: Issue | None) -> None:
    """A publish whose unfunded issue a corrected publish took over is not resumed: its terms no longer stand."""
    if issue is None or issue.superseded_by is None:
        return
    newer = s.store.get(Issue, Issue.create_id(issue.superseded_by))
    where = f" ({newer.url}, {display(newer.amount, newer.asset)})" if newer and newer.url else ""
    raise Code3Error(Code.IDEMPOTENT_REJECTED,
                     f"this publish of {issue.feature_id} was unfunded and replaced by a publish with other terms"
                     f"{where}", "repeat the newer publish (its amount and spec) to resume or reuse it")


def funded_labels(s: Services, issue: Issue, current: list[str]) -> list[str] | None:
    """An issue marked unfunded before a retry funded it gets its bounty's state label back (None: not marked)."""
    if UNFUNDED_LABEL not in current:
        return None
    bounty = s.store.get(Bounty, Bounty.create_id(present(issue.bounty_id, "the bounty id")))
    state = state_label(Status(bounty.status) if bounty else Status.OPEN, False)
    return sorted({label for label in current if label not in (*STATUS_LABELS, UNFUNDED_LABEL)} | {state})
