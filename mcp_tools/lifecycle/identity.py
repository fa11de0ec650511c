"""Identity links, the worker's side and the log's: the statement a worker publishes so that its PRs can be paid,
and the recording of the chain's `AccountLinked` events.

A worker publishes one statement (domain.bounties.links) as a comment written with its own forge account, signed by its
key; the resolver links it the first time it needs to (resolver.author_address), or at once when asked
(`code3 account link`). Nothing here moves money.
"""

from __future__ import annotations

from adapters.event_store import Change
from adapters.keystore import public_key_of, sign
from domain.bounties.chain_events import ChainEvent
from domain.bounties.identity_link import AccountLink
from domain.bounties.links import LinkStatement, link_message
from domain.errors import Code, Code3Error
from mcp_tools.lifecycle.answers import LinkState
from mcp_tools.lifecycle.chain_record import chain_read
from mcp_tools.services import Services


def statement(s: Services) -> LinkStatement:
    """This identity's statement that the forge account it acts as is its chain address (signed here, by its key)."""
    forge_user_id, login, account = s.forge.actor_id, s.forge.actor, s.signer.address
    signature = sign(s.signer, link_message(forge_user_id, account))
    return LinkStatement(login=login, forge_user_id=forge_user_id, account=account,
                         public_key=public_key_of(s.signer.private_key_hex).hex(), signature=signature.hex())


def comment_text(found: LinkStatement) -> str:
    return ("This links my forge account to my chain address, so that bounties paying for my pull requests reach "
            "it (Code3: a resolver checks this signature and records the link on chain).\n\n"
            f"```\n{found.text()}\n```\n")


def linked_address(s: Services, resolver: str | None) -> str | None:
    """The address the chain links to this identity's forge account under `resolver` (None: not linked)."""
    if resolver is None:
        return None
    with chain_read():
        return s.chain.linked_account(resolver, s.forge.actor_id)


def ensure_published(s: Services, resolver: str | None, repo: str, number: int) -> LinkState:
    """Make sure the resolver can link this identity: linked already, a statement of it already in the comments of
    `repo#number`, or one posted there now. What was found or done, for the tool's answer."""
    account = linked_address(s, resolver)
    if account == s.signer.address:
        return {"status": "linked", "forge_user": s.forge.actor, "account": account}
    if account is not None:
        raise Code3Error(Code.PRECONDITION, f"your forge account {s.forge.actor} is linked to {account}, not to this "
                         f"identity ({s.signer.address}): a PR of yours would pay that address",
                         "use the identity linked to your forge account, or publish a new statement with "
                         "`code3 account link` to link this one instead")
    mine = statement(s)
    for comment in s.forge.list_comments(repo, number):
        if comment.author_id == mine.forge_user_id and not comment.edited and mine.text() in comment.body:
            return {"status": "statement published", "forge_user": mine.login, "account": mine.account,
                    "comment_url": comment.url}
    comment_id = s.forge.create_comment(repo, number, comment_text(mine))
    url = next((c.url for c in s.forge.list_comments(repo, number) if c.id == comment_id), "")
    return {"status": "statement published", "forge_user": mine.login, "account": mine.account, "comment_url": url}


def record_links(s: Services, events: list[ChainEvent]) -> None:
    """Record the chain's AccountLinked events in the log (idempotent on their chain coordinates)."""
    changes = [_link_change(ev) for ev in events if ev.type == "AccountLinked"]
    if changes:
        s.store.update_all(*changes)


def _link_change(ev: ChainEvent) -> Change[AccountLink]:
    key = AccountLink.create_id(ev.data["resolver"], int(ev.data["forge_user_id"]))
    return Change.step(AccountLink, key, lambda link: link.observe(ev), create=lambda: AccountLink.from_chain(ev))
