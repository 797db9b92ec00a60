"""Information per probe on proof worlds: the bits each proof of a trajectory removed from the proof
explorer's hypothesis space.

A fresh ProofExplorer (built from the manual alone, `proof_view`) reads the trajectory's proofs in order.
Before each one it plans its own next pack (the bits that pack was expected to remove are the probe's
`best`); then it reads the proof's verdict and prunes (`bits`: log2 of each rule's mass before over the mass
kept, summed over rules). A proof the explorer itself would have sent is read test by test, any other proof
line by line (ProofExplorer.observe_proof). The runner sees only the records.
"""
from __future__ import annotations

from worldspec.compiler.api import ProbeInformation
from worldspec.compiler.common import Scorers
from worldspec.compiler.proof.explorer import ProofExplorer, proof_view


class ProofScorer:
    """A fresh proof explorer that has read some proofs of a trajectory, and their records so far."""

    def __init__(self, world, seed: int):
        self.ex = ProofExplorer(proof_view(world), seed)
        self.records: list[ProbeInformation] = []

    def feed(self, probes: tuple) -> None:
        """Read more proofs of the trajectory, in order."""
        ex = self.ex
        for text, feedback, units in probes:
            k = len(self.records)
            planned = ex.plan()
            best = ex.expected(planned)
            if planned:
                ex.register([t for t, _, _ in planned])  # the explorer's own pack is then read test by test
            if not units or not isinstance(text, str):
                self.records.append(ProbeInformation(k, 0, 0.0, 0.0))
                continue
            bits = ex.observe(text, feedback or "")
            self.records.append(ProbeInformation(k, int(units), round(bits, 3), round(max(best, bits), 3)))


def score(world, probes, seed: int = 0) -> list[ProbeInformation]:
    """One record per probe; `probes` holds (proof text, verdict text, units charged). The scorers live in
    the world's cache, which every variant of a compiled world shares."""
    scorers = world.cache.setdefault("information scorers", Scorers(ProofScorer))
    return scorers.score(world, probes, seed)
