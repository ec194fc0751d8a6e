"""`proclaim`'s settings: its section of ``RunConfig`` (composed from the protocol registry, see pipelines/core/config.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pipelines.protocols.base import ProtocolSettings


class ProClaimConfig(ProtocolSettings):
    """The `proclaim` courtroom: every threshold and weight of the published method, each adjustable."""

    max_premises: int = Field(default=5, ge=1, le=10, title="Max premises")
    """Most atomic premises the claim is decomposed into."""
    premise_top_k: int = Field(default=3, ge=1, le=20, title="Passages per premise")
    """Initial retrieval: top k per premise into the shared pool."""
    stance_top_k: int = Field(default=3, ge=1, le=20, title="Passages per stance query")
    """Initial retrieval: top k for the supporting and the challenging query."""
    round_top_k: int = Field(default=3, ge=1, le=20, title="Passages per round query")
    """Progressive retrieval: top k per counsel query each round."""
    relevance_from: Literal["stance", "judge"] = Field(default="stance", title="Exhibits' relevance from")
    """stance: where desk's stance reading is kept for a weighed belief (a grounded court on a calibrated model), r is read from it (2 x p(addresses) - 1) and c is not rated; judge: the judge rates r and c of every exhibit (the paper)."""
    admit_above: float = Field(default=0.5, ge=0, le=1, title="Admit above w")
    """An exhibit is admitted when w = relevance x credibility is above this."""
    discard_at_or_below: float = Field(default=0.1, ge=0, le=1, title="Discard at or below w")
    """An exhibit is discarded when w is at or below this; between the two it is disputed."""
    novelty_admit_at: float = Field(default=0.2, ge=0, le=1, title="Novelty to join")
    """A new item joins the pool only if 1 - max cosine to the pool is at least this."""
    max_rounds: int = Field(default=10, ge=1, le=30, title="Max rounds")
    """The debate stops after this many rounds at the latest."""
    first_stop_check_round: int = Field(default=2, ge=1, le=30, title="First stop check")
    """No stop rule is checked before this round (max rounds always applies)."""
    logic_weight: float = Field(default=0.4, ge=0, le=1, title="s_ref: logic weight")
    """Weight of logic in s_ref = a logic + b novelty + c rebuttal."""
    novelty_weight: float = Field(default=0.3, ge=0, le=1, title="s_ref: novelty weight")
    """Weight of novelty in the self-reflection score s_ref."""
    rebuttal_weight: float = Field(default=0.3, ge=0, le=1, title="s_ref: rebuttal weight")
    """Weight of rebuttal in the self-reflection score s_ref."""
    plateau_delta: float = Field(default=0.05, ge=0, le=1, title="Plateau |Δs_ref| below")
    """Reflection plateau: every side's s_ref changes by less than this..."""
    plateau_rounds: int = Field(default=2, ge=1, le=10, title="Plateau rounds")
    """...for this many consecutive rounds (0 change threshold turns the rule off)."""
    novelty_exhausted_below: float = Field(default=0.1, ge=0, le=1, title="Exhausted novelty below")
    """Novelty exhaustion: the mean novelty of a round's retrieval is below this..."""
    novelty_exhausted_retrievals: int = Field(default=2, ge=1, le=10, title="Exhausted retrievals")
    """...for this many consecutive retrievals (0 threshold turns the rule off)."""
    critic_can_resolve: bool = Field(default=True, title="Critic may end the debate")
    """Stop when the critic declares the debate resolved."""
    judge_can_close: bool = Field(default=True, title="Presiding judge may close")
    """Stop when the presiding judge says the court is ready to deliberate."""
    expert_witness: bool = Field(default=True, title="Expert witnesses")
    """Counsels may ask for an expert witness; the presiding judge decides."""
    max_experts: int = Field(default=2, ge=0, le=10, title="Max expert witnesses")
    """Most expert witnesses the court hears in one debate."""
    role_switch: bool = Field(default=True, title="Role switch")
    """After the debate counsels swap sides and argue again; their consistency adjusts the confidence."""
    role_switch_rounds: int = Field(default=1, ge=1, le=5, title="Role-switch rounds")
    """Rounds argued with the sides swapped."""
    gamma_high: float = Field(default=7.0, ge=0, le=10, title="Consistent gamma")
    """gamma (0-10) at or above this earns the high adjustment."""
    gamma_mid: float = Field(default=5.0, ge=0, le=10, title="Neutral gamma")
    """gamma at or above this (and below the high mark) earns the neutral adjustment."""
    delta_rs_high: float = Field(default=0.1, ge=-1, le=1, title="delta_rs when consistent")
    """Confidence adjustment when gamma >= the consistent mark."""
    delta_rs_mid: float = Field(default=0.0, ge=-1, le=1, title="delta_rs when neutral")
    """Confidence adjustment when gamma is between the two marks."""
    delta_rs_low: float = Field(default=-0.05, ge=-1, le=1, title="delta_rs when inconsistent")
    """Confidence adjustment when gamma is below the neutral mark."""
    tie_break: Literal["INCONCLUSIVE", "strongest judge"] = Field(default="INCONCLUSIVE", title="Split-panel tie-break")
    """A panel with no majority rules INCONCLUSIVE, or follows the judge with the highest mean quality score."""
    vote_share_weight: float = Field(default=0.8, ge=0, le=2, title="c_base: vote-share weight")
    """c_base = this x (winning votes / total) + ..."""
    quality_weight: float = Field(default=0.3, ge=0, le=2, title="c_base: quality weight")
    """... + this x (sum of the judges' mean quality scores / (10 x judges))."""
    ref_center: float = Field(default=0.5, ge=0, le=1, title="delta_ref centre")
    """delta_ref = max(floor, (s_ref - centre) x scale) of the winning side."""
    ref_scale: float = Field(default=0.6, ge=0, le=2, title="delta_ref scale")
    """How strongly the winning side's s_ref moves the confidence."""
    ref_floor: float = Field(default=-0.15, ge=-1, le=0, title="delta_ref floor")
    """The most delta_ref can take off the confidence."""
    confidence_floor: float = Field(default=0.1, ge=0, le=1, title="Confidence floor")
    """Lowest confidence when a majority of judges agree."""
    floor_min_agreeing: int = Field(default=2, ge=1, le=3, title="Judges agreeing for the floor")
    """How many judges must agree for the floor to apply."""
    judge_1_backend: str = Field(default="", title="Judge 1 backend")
    """Backend of panel judge 1; empty means the judge role's."""
    judge_1_model: str = Field(default="", title="Judge 1 model")
    """Model of panel judge 1; empty means the judge role's."""
    judge_1_base_url: str = Field(default="", title="Judge 1 base URL")
    """Endpoint of panel judge 1; empty means the judge role's."""
    judge_2_backend: str = Field(default="", title="Judge 2 backend")
    """Backend of panel judge 2; empty means the judge role's."""
    judge_2_model: str = Field(default="", title="Judge 2 model")
    """Model of panel judge 2; empty means the judge role's."""
    judge_2_base_url: str = Field(default="", title="Judge 2 base URL")
    """Endpoint of panel judge 2; empty means the judge role's."""
    judge_3_backend: str = Field(default="", title="Judge 3 backend")
    """Backend of panel judge 3; empty means the judge role's."""
    judge_3_model: str = Field(default="", title="Judge 3 model")
    """Model of panel judge 3; empty means the judge role's."""
    judge_3_base_url: str = Field(default="", title="Judge 3 base URL")
    """Endpoint of panel judge 3; empty means the judge role's."""
    exhibits_in_prompt: int = Field(default=12, ge=1, le=60, title="Exhibits per prompt")
    """Most exhibits (admitted first, by w) shown to a counsel, critic or judge."""
    premise_addressed_at: float = Field(default=0.5, ge=0, le=1, title="Premise addressed at")
    """An argument addresses a premise when a sentence of it has at least this cosine to the premise."""

    def panel_seat(self, number: int) -> dict[str, str]:
        """The overrides of panel judge ``number`` (1-3): only the fields that are set."""
        fields = {"backend": f"judge_{number}_backend", "model": f"judge_{number}_model", "base_url": f"judge_{number}_base_url"}
        return {key: str(getattr(self, name)) for key, name in fields.items() if getattr(self, name)}
