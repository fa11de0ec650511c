"""The Sealer ai-loom writes through: a box that seals (adapters/secret_box.py) and the scrubber's judgement
of which texts must be sealed whatever their sensitivity (adapters/scrub.py: a text bearing a credential).

Kept apart from the box so that the box only encrypts and the scrubber's patterns stay the one set.
"""

from __future__ import annotations

from typing import Protocol

from adapters.scrub import bears_credential


class Box(Protocol):
    def seal(self, plaintext: str) -> str: ...

    def open(self, sealed: str) -> str: ...


class CredentialSealer:
    """Implements domain.knowledge.annotation.JudgingSealer over a box (a SecretBox)."""

    def __init__(self, box: Box) -> None:
        self.box = box

    def seal(self, plaintext: str) -> str:
        return self.box.seal(plaintext)

    def open(self, sealed: str) -> str:
        return self.box.open(sealed)

    def must_seal(self, text: str) -> bool:
        return bears_credential(text)
