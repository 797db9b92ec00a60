"""What a run is asked to do: `RunConfig`, and the part of it the log header keeps.

One record serves every protocol; each protocol names the fields that change its
results (`RunProtocol.config_keys`). Those, the systems and the expected sessions
form the header's `config`, which a resumed run must match. Operational fields
(connections, retries) change no result and stay out of it.
"""
from __future__ import annotations

import attrs

from .models import RetryPolicy

COMMON_KEYS = ("settings", "api_base", "world_seed")
# How turn@shot answers are read and compared: "published" (the released Oracle code's comparisons, the
# default) or "lenient" (the box's own grading: quotes, fences, tuples, tolerances).
GRADINGS = ("published", "lenient")


@attrs.frozen
class RunConfig:
    # milestone worlds
    conditions: tuple[str, ...] = ("autonomous",)
    trajectories: int = 3  # n for the autonomous condition
    control_trajectories: int = 1  # each control condition (paper: once per system)
    answers: int | None = None  # None: the world's budget.answers
    hindsight_from: str | None = None
    volume_from: str | None = None
    full_volume: bool = False  # fixed: the full budget instead of a reference trajectory's volume
    fixed_seed: int = 0
    rule_prompt: str = "slots"  # the rule-report prompt: the released slot listing, or "open" (answers.RULE_PROMPTS)
    # turn@shot worlds (None: each box's own budget)
    turns: int | None = None
    shots: int | None = None
    grading: str = "published"  # of GRADINGS: as the released Oracle code, or our lenient reading
    # judge worlds: "keyword" | "model" | None (a model when one plays), and the judge model's id
    judge: str | None = None
    judge_model: str | None = None
    # every protocol
    settings: dict = attrs.field(factory=dict)
    api_base: str | None = None
    world_seed: int | None = None
    # operational: do not change results, not part of the resume check
    max_connections: int = 16
    retry: RetryPolicy = RetryPolicy()

    def identity(self, protocol, lineup) -> dict:
        """The header's `config`: protocol, systems, expected sessions and the fields that matter."""
        fields = attrs.asdict(self, recurse=False)
        return {"protocol": protocol.name, "systems": list(lineup.names), "model_ids": list(lineup.model_ids),
                **{k: fields[k] for k in (*protocol.config_keys, *COMMON_KEYS)}, "jobs": lineup.jobs()}
