"""The GeneratedSpec aggregate: a reverse-spec `.spec.md`, keyed by its project-relative path.

Its events say who wrote the spec from which skeleton hash, with which model and how many tokens, and
who accepted a drift (the baseline rewritten in place, the prose kept). A feature's spec-kit `Spec`
stays keyed by its feature id; this one is the reverse-spec side.
"""

from __future__ import annotations

from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.canonical import natural_id


class GeneratedSpec(Aggregate):

    class Generated(Aggregate.Created):
        spec_path: str
        source_target: str
        skeleton_hash: str
        model: str
        input_tokens: int
        output_tokens: int
        who: str
        version: int
        confidence: str

    class Regenerated(Aggregate.Event):
        source_target: str
        skeleton_hash: str
        model: str
        input_tokens: int
        output_tokens: int
        who: str
        version: int
        confidence: str

    class DriftAccepted(Aggregate.Event):
        who: str
        from_hash: str
        to_hash: str
        high: int
        medium: int
        low: int
    @staticmethod
    def create_id(spec_path: str) -> UUID:
        return natural_id("generated-spec", spec_path)

    @event(Generated)
    def __init__(self, spec_path: str, source_target: str, skeleton_hash: str, model: str, input_tokens: int,
                 output_tokens: int, who: str, version: int, confidence: str) -> None:
        self.spec_path = spec_path
        self.source_target = source_target
        self.skeleton_hash = skeleton_hash
        self.model = model
        self.version = version
        self.generations = 1
        self.drifts_accepted = 0

    @classmethod
    def adopt(cls, spec_path: str, source_target: str, skeleton_hash: str, model: str, version: int,
              confidence: str) -> GeneratedSpec:
        """A spec the log has not seen (written before events were kept, or by hand) joins it as it stands: by
        "(adopted)", with no tokens, since nobody here generated it."""
        return cls(spec_path=spec_path, source_target=source_target, skeleton_hash=skeleton_hash, model=model,
                   input_tokens=0, output_tokens=0, who="(adopted)", version=version, confidence=confidence)

    def record_generation(self, source_target: str, skeleton_hash: str, model: str, input_tokens: int,
                          output_tokens: int, who: str, version: int, confidence: str) -> bool:
        """A spec generated again is always recorded, even as it was: each run's author, model and tokens are
        the spec's history (and its cost)."""
        self.regenerate(source_target=source_target, skeleton_hash=skeleton_hash, model=model,
                        input_tokens=input_tokens, output_tokens=output_tokens, who=who, version=version,
                        confidence=confidence)
        return True

    def record_acceptance(self, who: str, from_hash: str, to_hash: str, high: int, medium: int, low: int) -> bool:
        """An accepted drift is always recorded, even one that moves no hash (a baseline re-derived by a newer
        parser): who accepted which change of the surface is what a reviewer asks later."""
        self.accept_drift(who=who, from_hash=from_hash, to_hash=to_hash, high=high, medium=medium, low=low)
        return True

    @event(Regenerated)
    def regenerate(self, source_target: str, skeleton_hash: str, model: str, input_tokens: int, output_tokens: int,
                   who: str, version: int, confidence: str) -> None:
        self.source_target = source_target
        self.skeleton_hash = skeleton_hash
        self.model = model
        self.version = version
        self.generations += 1

    @event(DriftAccepted)
    def accept_drift(self, who: str, from_hash: str, to_hash: str, high: int, medium: int, low: int) -> None:
        self.skeleton_hash = to_hash
        self.drifts_accepted += 1
