"""The identity link between a forge account and a chain address, and the statement that proves it.

A link is made once and reused: the address's key signs `link_message(forge_user_id, address)`; the forge
account publishes that signature in a comment (on the bounty's issue or its own PR); a resolver that reads
the comment, and sees it written by that forge account and never edited, records the link on chain. The
chain checks the signature against the key that authenticates the address, so no resolver can link an
address without its key, and nobody but the forge account's owner can publish the statement as that account.
Anyone can check a link: the comment is public, and the message is rebuilt from the two ids alone.

Pure: the signature itself is made and checked by adapters (ed25519), never here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.bounties.contract_terms import LINK_PREFIX, MAX_LOGIN_BYTES

HEADER = "code3-link v1"
_STATEMENT = re.compile(
    rf"^{re.escape(HEADER)}\n"
    r"forge user: (?P<login>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})) \((?P<id>[1-9][0-9]{0,19})\)\n"
    r"account: (?P<account>0x[0-9a-f]{64})\n"
    r"public key: (?P<public_key>[0-9a-f]{64})\n"
    r"signature: (?P<signature>[0-9a-f]{128})$", re.M)


@dataclass(frozen=True)
class LinkStatement:
    login: str
    forge_user_id: int
    account: str
    public_key: str
    signature: str

    def text(self) -> str:
        """The block a forge comment carries (inside a fenced block, so it renders as written)."""
        return (f"{HEADER}\nforge user: {self.login} ({self.forge_user_id})\naccount: {self.account}\n"
                f"public key: {self.public_key}\nsignature: {self.signature}")


def link_message(forge_user_id: int, account: str) -> bytes:
    """What the address's key signs: a fixed prefix, the forge user id as a little-endian u64 and the address's
    32 bytes (the BCS encodings the Move module builds the same message from)."""
    digits = account.lower().removeprefix("0x")
    if len(digits) > 64 or any(c not in "0123456789abcdef" for c in digits) or not digits:
        raise ValueError(f"not an account address: {account!r}")
    if not 0 < forge_user_id < 2**64:
        raise ValueError(f"not a forge user id: {forge_user_id!r}")
    return LINK_PREFIX + forge_user_id.to_bytes(8, "little") + bytes.fromhex(digits.zfill(64))


def find_statement(text: str) -> LinkStatement | None:
    """The first well-formed statement in a comment's text, or None."""
    found = _STATEMENT.search(text.replace("\r\n", "\n"))
    if found is None or len(found["login"].encode()) > MAX_LOGIN_BYTES or int(found["id"]) >= 2**64:
        return None
    return LinkStatement(login=found["login"], forge_user_id=int(found["id"]), account=found["account"],
                         public_key=found["public_key"], signature=found["signature"])
