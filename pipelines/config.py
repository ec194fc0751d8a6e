"""One configuration model: defaults, titles and descriptions for every knob; env vars override.

``RunConfig`` is what one run needs (protocol, models per role, thresholds); it is
snapshotted into the run record without secrets. ``AppSettings`` is where the app keeps
its data. Both read ``DEBATEDESK_*`` variables (nested fields with ``__``), e.g.
``DEBATEDESK_DEBATER__BACKEND=openai`` or ``DEBATEDESK_DATA_DIR=/srv/desk``.
This module is the only place in ``pipelines/`` that reads the environment.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from pipelines.errors import DebateDeskError
from pipelines.text.urls import scrub_url, url_secrets
from pipelines.tools.source_policy import parse_domains

ENV_PREFIX = "DEBATEDESK_"
MAX_CLAIM_CHARS = 2000


class ModelSpec(BaseModel):
    """Which model plays a role, and where it is served."""

    backend: str = Field(
        default="embedded",
        title="Backend",
        description="fake (instant, not a real model), embedded (local llama.cpp), or openai (any OpenAI-compatible endpoint).",
    )
    model: str = Field(
        default="",
        title="Model",
        description="Model name at the endpoint; empty means the backend's default.",
    )
    base_url: str = Field(
        default="",
        title="Base URL",
        description="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 for Ollama; empty means OPENAI_BASE_URL or api.openai.com.",
    )
    api_key: SecretStr = Field(
        default=SecretStr(""),
        title="API key",
        description="Key for the endpoint; empty means OPENAI_API_KEY. Never stored with a run.",
    )
    temperature: float = Field(default=0.0, ge=0, le=2, title="Temperature", description="Sampling temperature; 0 is the most repeatable.")
    max_tokens: int = Field(default=384, ge=16, le=8192, title="Max tokens", description="Longest answer a call may produce.")
    timeout_s: float = Field(default=300.0, gt=0, title="Timeout (s)", description="How long one call may take before it fails.")
    max_retries: int = Field(default=2, ge=0, le=5, title="Retries", description="Extra attempts when structured output is malformed.")
    concurrency: int = Field(
        default=4,
        ge=1,
        le=64,
        title="Parallel calls",
        description="How many calls to this backend may run at once; the embedded model's server takes at most its slots (one on 2 threads), the rest wait in the app, where their timeout does not run.",
    )
    logprobs: bool = Field(
        default=False,
        title="Token probabilities (embedded)",
        description="Start the embedded llama.cpp server with logits_all so it returns token probabilities (radar's label probabilities); costs about 0.6 MB of memory per prompt token. Other backends are always asked; without probabilities they are estimated by sampling.",
    )
    cache: Literal["auto", "on", "off"] = Field(
        default="auto",
        title="Response cache",
        description="Reuse the stored answer to an identical call (same model, prompt and parameters). auto: on for fake and embedded, off for paid APIs.",
    )


class RetrievalConfig(BaseModel):
    """How evidence is found."""

    top_k: int = Field(
        default=3,
        ge=1,
        le=50,
        title="Passages per query",
        description="How many documents one corpus query returns, each as its best passage.",
    )
    web_search: bool = Field(
        default=True, title="Web search", description="Let agents search the web (ddgs); offline the run carries on without it."
    )
    web_top_k: int = Field(default=3, ge=1, le=20, title="Web results per query", description="How many web results one search returns.")
    web_timeout_s: float = Field(default=8.0, gt=0, title="Web timeout (s)", description="How long one web search may take.")
    mode: Literal["hybrid", "dense", "lexical"] = Field(
        default="hybrid",
        title="Search mode",
        description="hybrid (meaning and words, fused: the best on Check-COVID), dense (meaning only, MiniLM) or lexical (words only, BM25).",
    )
    rewrites: int = Field(
        default=0,
        ge=0,
        le=5,
        title="Query rewrites",
        description="Before the first search for the claim, the model rewrites it into this many search queries; each is searched as well and keeps its own top results, so more documents reach the pool (one extra model call per run).",
    )
    rerank: Literal["none", "sentences", "judge"] = Field(
        default="none",
        title="Rerank",
        description="Re-order the fused top 20 before keeping the best: sentences (each passage's best sentence by meaning: offline, but it embeds 60 sentences per query), judge (the judge model scores them in one call) or none.",
    )
    source_policy: Literal["open", "health"] = Field(
        default="open",
        title="Web source policy",
        description="open (any site) or health (only .gov, .edu, who.int and medical journals); the domain lists below add to it.",
    )
    allow_domains: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        title="Allowed web domains",
        description="Comma-separated; when set, web results from other domains never reach an agent. Subdomains match: nih.gov allows www.ncbi.nlm.nih.gov; .edu allows every .edu site.",
    )
    deny_domains: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        title="Denied web domains",
        description="Comma-separated; web results from these domains (and their subdomains) never reach an agent. Wins over the allowed list.",
    )

    @field_validator("allow_domains", "deny_domains", mode="before")
    @classmethod
    def _domains(cls, value: Any) -> list[str]:
        return parse_domains(value if isinstance(value, str | list | tuple) else str(value))


class SingleConfig(BaseModel):
    """The `single` baseline: one agent, one query, one answer."""

    queries: int = Field(default=1, ge=1, le=5, title="Queries", description="How many search queries the agent writes from the claim.")


StanceReader = Literal["both", "separate", "contrast"]  # what desk asks of each exhibit (pipelines/stages/stance.py)
LLAMA_CACHE_RAM_MIB = 512  # the embedded server's prompt cache (docs/measurements/2026-11-26-server-memory.md)
CONTRAST_SHARE = 0.3  # the contrast question's weight with the reader "both", fitted on Check-COVID train (pipelines/calibration)


class DeskConfig(BaseModel):
    """`desk`: exhibits read for their stance from label probabilities, a calibrated verdict, a debate only where exhibits conflict."""

    exhibits: int = Field(
        default=25,
        ge=1,
        le=30,
        title="Exhibits",
        description="Most passages read for their stance (from the claim's search, its rewrites and the web), best first. On Check-COVID dev the deciding abstract was among the first 25 for 0.93 of claims, among the first 5 for 0.74; each exhibit costs about 1.5 s on the embedded model.",
    )
    rewrites: int = Field(
        default=0,
        ge=0,
        le=5,
        title="Query rewrites",
        description="The model rewrites the claim into this many search queries, each searched too (one extra call).",
    )
    reader: StanceReader = Field(
        default="contrast",
        title="Stance question",
        description="contrast: the claim and its opposite are both answers and the model says which one the exhibit supports, or neither (the opposite is always written; 2 calls an exhibit, so 25 exhibits take about 1.5 times as long as 'both' takes for 5; use 2 option orders with it); separate: the exhibit is read against the claim (and against its opposite when 'Read the claim's opposite too' is on), each time supports / contradicts / does not address; both: the separate questions, then the contrast one in 2 orders, weighed by 'Contrast question's share' (the best verdict over 5 exhibits on Check-COVID train, 8 calls an exhibit; use 3 option orders and 5 exhibits with it).",
    )
    contrast_share: float = Field(
        default=CONTRAST_SHARE,
        ge=0.0,
        le=1.0,
        title="Contrast question's share",
        description="With the stance question 'both': the contrast question's weight in each exhibit's stance (fitted on Check-COVID train).",
    )
    orders: Literal[1, 2, 3, 6] = Field(
        default=2,
        title="Option orders",
        description="How many orders of the answer options each exhibit is read in; averaging them cancels the model's preference for a position (separate, 3: each answer takes each position once; contrast, 2: the claim and its opposite swap letters).",
    )
    unit: Literal["passage", "document"] = Field(
        default="passage",
        title="Read each exhibit as",
        description="passage (the retrieved passage, a few sentences) or document (the whole document it comes from, cut at 2,400 characters).",
    )
    negation: bool = Field(
        default=True,
        title="Read the claim's opposite too",
        description="For the separate question: the model writes the claim's opposite (one call) and every exhibit is read against it as well, its supports counted as the claim's contradicts: this cancels the model's lean towards one answer, at twice the reading calls. The contrast question always reads the opposite.",
    )
    shots: int = Field(
        default=0,
        ge=0,
        le=3,
        title="Worked examples",
        description="Worked examples from Check-COVID train shown before each reading (one passage that supports its claim, one that does not address it, one that contradicts it).",
    )
    quotes: int = Field(
        default=2, ge=1, le=5, title="Quoted sentences", description="Sentences quoted from each exhibit (those closest to the claim)."
    )
    debate: bool = Field(
        default=True,
        title="Debate conflicts",
        description="When strong exhibits point both ways, two advocates argue from their side's exhibits and the contested exhibits are read again in the light of both.",
    )
    strong_at: float = Field(
        default=0.5,
        ge=0,
        le=1,
        title="Strong exhibit",
        description="An exhibit counts as strong for a side when its probability of that stance is at least this.",
    )
    decide_at: float = Field(
        default=0.0,
        ge=0,
        le=1,
        title="Least confidence",
        description="NOT ENOUGH INFO when the calibrated probability of the likelier side is below this (0: the calibration file's own threshold).",
    )
    argument_tokens: int = Field(default=120, ge=32, le=600, title="Argument length", description="Most tokens an advocate may write.")


class ToolMadConfig(BaseModel):
    """`toolmad`: a RAG debater and a Search debater argue; faithfulness and answer relevance gate an early stop."""

    rounds: int = Field(default=3, ge=1, le=10, title="Rounds (T)", description="Most debate rounds before the judge rules.")
    rag_top_k: int = Field(default=3, ge=1, le=20, title="RAG passages", description="Corpus passages the RAG debater retrieves per round.")
    search_top_k: int = Field(
        default=3,
        ge=1,
        le=20,
        title="Search results",
        description="Web results the Search debater retrieves per round (corpus passages when the web is down).",
    )
    faithfulness_threshold: float = Field(
        default=0.7,
        ge=0,
        le=1,
        title="F threshold",
        description="Faithfulness each answer needs for an early stop (supported statements / all).",
    )
    relevance_threshold: float = Field(
        default=0.8,
        ge=0,
        le=1,
        title="AR threshold",
        description="Answer relevance each answer needs for an early stop (mean cosine, claim vs questions).",
    )
    relevance_questions: int = Field(
        default=3,
        ge=1,
        le=10,
        title="AR questions",
        description="Questions generated from each answer to measure its relevance to the claim.",
    )
    max_statements: int = Field(
        default=8, ge=1, le=30, title="Statements per answer", description="Most atomic statements checked per answer for faithfulness."
    )
    faithfulness_reader: Literal["generated", "read"] = Field(
        default="generated",
        title="Faithfulness reader",
        description=(
            "generated: the scorer writes the statements and their verdicts as JSON (ragas's way); read: the statements are the "
            "answer's sentences and each is one letter (which item states it, or none) read from token probabilities, one token "
            "written a statement. Read took 40% of the time on the embedded model but passed nearly every answer and its "
            "debaters copied each other again (docs/measurements/2026-11-27-toolmad-faithfulness.md)."
        ),
    )
    early_stop: bool = Field(
        default=True, title="Early stop", description="Stop when both labels agree and both answers pass the F and AR thresholds."
    )
    evidence_chars: int = Field(
        default=700,
        ge=100,
        le=4000,
        title="Evidence length",
        description="Characters of each evidence item shown to the debaters and the scorer.",
    )
    judge_evidence_chars: int = Field(
        default=400,
        ge=100,
        le=4000,
        title="Judge evidence length",
        description="Characters of each evidence item shown to the judge (it sees every round's).",
    )


class ProClaimConfig(BaseModel):
    """The `proclaim` courtroom: every threshold and weight of the published method, each adjustable."""

    max_premises: int = Field(
        default=5, ge=1, le=10, title="Max premises", description="Most atomic premises the claim is decomposed into."
    )
    premise_top_k: int = Field(
        default=3, ge=1, le=20, title="Passages per premise", description="Initial retrieval: top k per premise into the shared pool."
    )
    stance_top_k: int = Field(
        default=3,
        ge=1,
        le=20,
        title="Passages per stance query",
        description="Initial retrieval: top k for the supporting and the challenging query.",
    )
    round_top_k: int = Field(
        default=3, ge=1, le=20, title="Passages per round query", description="Progressive retrieval: top k per counsel query each round."
    )
    admit_above: float = Field(
        default=0.5, ge=0, le=1, title="Admit above w", description="An exhibit is admitted when w = relevance x credibility is above this."
    )
    discard_at_or_below: float = Field(
        default=0.1,
        ge=0,
        le=1,
        title="Discard at or below w",
        description="An exhibit is discarded when w is at or below this; between the two it is disputed.",
    )
    novelty_admit_at: float = Field(
        default=0.20,
        ge=0,
        le=1,
        title="Novelty to join",
        description="A new item joins the pool only if 1 - max cosine to the pool is at least this.",
    )
    max_rounds: int = Field(
        default=10, ge=1, le=30, title="Max rounds", description="The debate stops after this many rounds at the latest."
    )
    first_stop_check_round: int = Field(
        default=2,
        ge=1,
        le=30,
        title="First stop check",
        description="No stop rule is checked before this round (max rounds always applies).",
    )
    logic_weight: float = Field(
        default=0.4, ge=0, le=1, title="s_ref: logic weight", description="Weight of logic in s_ref = a logic + b novelty + c rebuttal."
    )
    novelty_weight: float = Field(
        default=0.3, ge=0, le=1, title="s_ref: novelty weight", description="Weight of novelty in the self-reflection score s_ref."
    )
    rebuttal_weight: float = Field(
        default=0.3, ge=0, le=1, title="s_ref: rebuttal weight", description="Weight of rebuttal in the self-reflection score s_ref."
    )
    plateau_delta: float = Field(
        default=0.05,
        ge=0,
        le=1,
        title="Plateau |Δs_ref| below",
        description="Reflection plateau: every side's s_ref changes by less than this...",
    )
    plateau_rounds: int = Field(
        default=2,
        ge=1,
        le=10,
        title="Plateau rounds",
        description="...for this many consecutive rounds (0 change threshold turns the rule off).",
    )
    novelty_exhausted_below: float = Field(
        default=0.10,
        ge=0,
        le=1,
        title="Exhausted novelty below",
        description="Novelty exhaustion: the mean novelty of a round's retrieval is below this...",
    )
    novelty_exhausted_retrievals: int = Field(
        default=2,
        ge=1,
        le=10,
        title="Exhausted retrievals",
        description="...for this many consecutive retrievals (0 threshold turns the rule off).",
    )
    critic_can_resolve: bool = Field(
        default=True, title="Critic may end the debate", description="Stop when the critic declares the debate resolved."
    )
    judge_can_close: bool = Field(
        default=True, title="Presiding judge may close", description="Stop when the presiding judge says the court is ready to deliberate."
    )
    expert_witness: bool = Field(
        default=True, title="Expert witnesses", description="Counsels may ask for an expert witness; the presiding judge decides."
    )
    max_experts: int = Field(
        default=2, ge=0, le=10, title="Max expert witnesses", description="Most expert witnesses the court hears in one debate."
    )
    role_switch: bool = Field(
        default=True,
        title="Role switch",
        description="After the debate counsels swap sides and argue again; their consistency adjusts the confidence.",
    )
    role_switch_rounds: int = Field(default=1, ge=1, le=5, title="Role-switch rounds", description="Rounds argued with the sides swapped.")
    gamma_high: float = Field(
        default=7.0, ge=0, le=10, title="Consistent gamma", description="gamma (0-10) at or above this earns the high adjustment."
    )
    gamma_mid: float = Field(
        default=5.0,
        ge=0,
        le=10,
        title="Neutral gamma",
        description="gamma at or above this (and below the high mark) earns the neutral adjustment.",
    )
    delta_rs_high: float = Field(
        default=0.10, ge=-1, le=1, title="delta_rs when consistent", description="Confidence adjustment when gamma >= the consistent mark."
    )
    delta_rs_mid: float = Field(
        default=0.0, ge=-1, le=1, title="delta_rs when neutral", description="Confidence adjustment when gamma is between the two marks."
    )
    delta_rs_low: float = Field(
        default=-0.05,
        ge=-1,
        le=1,
        title="delta_rs when inconsistent",
        description="Confidence adjustment when gamma is below the neutral mark.",
    )
    tie_break: Literal["INCONCLUSIVE", "strongest judge"] = Field(
        default="INCONCLUSIVE",
        title="Split-panel tie-break",
        description="A panel with no majority rules INCONCLUSIVE, or follows the judge with the highest mean quality score.",
    )
    vote_share_weight: float = Field(
        default=0.8, ge=0, le=2, title="c_base: vote-share weight", description="c_base = this x (winning votes / total) + ..."
    )
    quality_weight: float = Field(
        default=0.3,
        ge=0,
        le=2,
        title="c_base: quality weight",
        description="... + this x (sum of the judges' mean quality scores / (10 x judges)).",
    )
    ref_center: float = Field(
        default=0.5,
        ge=0,
        le=1,
        title="delta_ref centre",
        description="delta_ref = max(floor, (s_ref - centre) x scale) of the winning side.",
    )
    ref_scale: float = Field(
        default=0.6, ge=0, le=2, title="delta_ref scale", description="How strongly the winning side's s_ref moves the confidence."
    )
    ref_floor: float = Field(
        default=-0.15, ge=-1, le=0, title="delta_ref floor", description="The most delta_ref can take off the confidence."
    )
    confidence_floor: float = Field(
        default=0.10, ge=0, le=1, title="Confidence floor", description="Lowest confidence when a majority of judges agree."
    )
    floor_min_agreeing: int = Field(
        default=2, ge=1, le=3, title="Judges agreeing for the floor", description="How many judges must agree for the floor to apply."
    )
    judge_1_backend: str = Field(default="", title="Judge 1 backend", description="Backend of panel judge 1; empty means the judge role's.")
    judge_1_model: str = Field(default="", title="Judge 1 model", description="Model of panel judge 1; empty means the judge role's.")
    judge_1_base_url: str = Field(
        default="", title="Judge 1 base URL", description="Endpoint of panel judge 1; empty means the judge role's."
    )
    judge_2_backend: str = Field(default="", title="Judge 2 backend", description="Backend of panel judge 2; empty means the judge role's.")
    judge_2_model: str = Field(default="", title="Judge 2 model", description="Model of panel judge 2; empty means the judge role's.")
    judge_2_base_url: str = Field(
        default="", title="Judge 2 base URL", description="Endpoint of panel judge 2; empty means the judge role's."
    )
    judge_3_backend: str = Field(default="", title="Judge 3 backend", description="Backend of panel judge 3; empty means the judge role's.")
    judge_3_model: str = Field(default="", title="Judge 3 model", description="Model of panel judge 3; empty means the judge role's.")
    judge_3_base_url: str = Field(
        default="", title="Judge 3 base URL", description="Endpoint of panel judge 3; empty means the judge role's."
    )
    exhibits_in_prompt: int = Field(
        default=12,
        ge=1,
        le=60,
        title="Exhibits per prompt",
        description="Most exhibits (admitted first, by w) shown to a counsel, critic or judge.",
    )
    premise_addressed_at: float = Field(
        default=0.5,
        ge=0,
        le=1,
        title="Premise addressed at",
        description="An argument addresses a premise when a sentence of it has at least this cosine to the premise.",
    )

    def panel_seat(self, number: int) -> dict[str, str]:
        """The overrides of panel judge ``number`` (1-3): only the fields that are set."""
        fields = {"backend": f"judge_{number}_backend", "model": f"judge_{number}_model", "base_url": f"judge_{number}_base_url"}
        return {key: str(getattr(self, name)) for key, name in fields.items() if getattr(self, name)}


class PauseConfig(BaseModel):
    """Step mode's pauses: where a run waits for the checker (the person) between rounds."""

    step_mode: bool = Field(
        default=False,
        title="Step mode",
        description="Pause after each round so the checker can edit the next queries, strike or add evidence, then continue or stop.",
    )
    pause_timeout_min: float = Field(
        default=60.0,
        gt=0,
        le=24 * 60,
        title="Pause timeout (min)",
        description="How long a paused run waits for the checker; then it is marked interrupted and can be resumed from History.",
    )


class BudgetConfig(BaseModel):
    """Spend limits: a run (and a batch) stops cleanly between model calls once it reaches one; 0 means no limit."""

    max_calls: int = Field(
        default=0,
        ge=0,
        le=100_000,
        title="Calls per run",
        description="Most model calls one run may make (answers from a cache are free); 0: no limit.",
    )
    max_tokens: int = Field(
        default=0, ge=0, le=100_000_000, title="Tokens per run", description="Most tokens (in and out) one run may spend; 0: no limit."
    )
    max_cost: float = Field(
        default=0.0,
        ge=0,
        le=100_000,
        title="Money per run",
        description="Most money one run may spend, at the prices below (in their currency); 0: no limit.",
    )
    batch_max_calls: int = Field(
        default=0,
        ge=0,
        le=10_000_000,
        title="Calls per batch",
        description="Most model calls a whole batch may make; then it starts no more claims. 0: no limit.",
    )
    batch_max_tokens: int = Field(
        default=0, ge=0, le=1_000_000_000, title="Tokens per batch", description="Most tokens a whole batch may spend; 0: no limit."
    )
    batch_max_cost: float = Field(
        default=0.0,
        ge=0,
        le=1_000_000,
        title="Money per batch",
        description="Most money a whole batch may spend, at the prices below; 0: no limit.",
    )
    prices: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        title="Prices per 1,000 tokens",
        description="Comma-separated model=price pairs, the price of 1,000 tokens (in and out) in your currency, e.g. gpt-4o-mini=0.0006. A model not listed costs the default price.",
        examples=["gpt-4o-mini=0.0006, gpt-4o=0.01"],
    )
    default_price: float = Field(
        default=0.0,
        ge=0,
        le=1000,
        title="Default price per 1,000 tokens",
        description="The price of a model the list does not name (0: local models cost nothing).",
    )

    @field_validator("prices", mode="before")
    @classmethod
    def _prices(cls, value: Any) -> list[str]:
        return [f"{model}={price:g}" for model, price in parse_prices(value).items()]

    def price_of(self, model: str) -> float:
        """The price of 1,000 tokens of ``model``."""
        return parse_prices(self.prices).get(model, self.default_price)

    def unpriced_models(self, models: Iterable[str]) -> list[str]:
        """Of ``models``, those a money limit could never count (no listed price and no default price); none without one."""
        if not (self.max_cost or self.batch_max_cost) or self.default_price:
            return []
        listed = parse_prices(self.prices)
        return sorted({m for m in models if m not in listed})

    def describe(self) -> str:
        """The limits in force in a few words ("40 calls, 0.5 per run · 200 calls per batch"), or "" when there are none."""

        def part(calls: int, tokens: int, cost: float, scope: str) -> str:
            words = [f"{calls:,} calls" if calls else "", f"{tokens:,} tokens" if tokens else "", f"{cost:g} spent" if cost else ""]
            shown = ", ".join(w for w in words if w)
            return f"{shown} per {scope}" if shown else ""

        parts = [
            part(self.max_calls, self.max_tokens, self.max_cost, "run"),
            part(self.batch_max_calls, self.batch_max_tokens, self.batch_max_cost, "batch"),
        ]
        return " · ".join(p for p in parts if p)

    @property
    def limits_run(self) -> bool:
        return bool(self.max_calls or self.max_tokens or self.max_cost)

    @property
    def limits_batch(self) -> bool:
        return bool(self.batch_max_calls or self.batch_max_tokens or self.batch_max_cost)


def parse_prices(value: Any) -> dict[str, float]:
    """``"gpt-4o=0.01, gpt-4o-mini=0.0006"`` (or a list of such pairs) as {model: price}; raises ValueError saying which pair is wrong."""
    items = value.split(",") if isinstance(value, str) else [str(v) for v in value or []]
    prices: dict[str, float] = {}
    for item in (i.strip() for i in items):
        if not item:
            continue
        model, sep, price = item.rpartition("=")
        try:
            amount = float(price)
        except ValueError:
            amount = -1.0
        if not sep or not model.strip() or not 0 <= amount < 1e6:
            raise ValueError(f"{item!r} is not model=price (a model name, '=', and a price of 0 or more), e.g. gpt-4o-mini=0.0006")
        prices[model.strip()] = amount
    return prices


class BeliefConfig(BaseModel):
    """What every protocol adds to its debate: the judge's belief after each round, a ruling on the evidence beside its own, desk's exhibits to start from."""

    per_round: bool = Field(
        default=True,
        title="Belief after each round",
        description="After each round (desk: before and after its debate; mermaid: after each search step and at its answer; single: at the end), the judge's probabilities of supported, refuted and not enough info given the debate so far, read from its answer letters in 2 option orders (2 short calls a round).",
    )
    desk_weighed: bool = Field(
        default=True,
        title="desk's belief: its weighed exhibits",
        description="desk's belief before and after its debate is its calibrated weighing of its exhibits (each stance read on its own; no extra call) where the model has a calibration; off: the judge is asked over the exhibits at once, as every debate's belief is (the embedded model's answer told supported from refuted claims no better than chance that way).",
    )
    debate_reader: Literal["letters", "weighed"] = Field(
        default="weighed",
        title="A debate's belief",
        description="weighed (a debate grounded in desk's exhibits, on a model with a calibration; else letters): the evidence weighed as desk weighs its exhibits, those a round cites read again with the arguments made about them (at most 'Items read again' a round, 2 calls each with desk's contrast question); letters: after each round the judge is asked over the evidence and the debate so far, and its answer letters read (the embedded model's answer told supported from refuted claims no better than chance that way).",
    )
    reread: int = Field(
        default=3,
        ge=1,
        le=10,
        title="Items read again",
        description="With a weighed debate belief: most evidence items read after a round (those its turns cite first, then evidence never read).",
    )
    reread_with: Literal["citing", "every side"] = Field(
        default="citing",
        title="Read again with",
        description=(
            "With a weighed debate belief, the arguments an item cited in a round is read again with: citing, the arguments "
            "that cite it; every side, each debater's argument of the round beside them, as desk reads a contested exhibit "
            "(on 8 train debates it moved the belief in 3, each time further towards the debaters' label, the wrong way twice: "
            "docs/measurements/2026-11-27-belief-reread.md)."
        ),
    )
    evidence: int = Field(
        default=6,
        ge=0,
        le=20,
        title="Evidence the belief reads",
        description="Most evidence items in the belief prompt: those the debaters cited first, then the rest in the order they were found.",
    )
    evidence_chars: int = Field(
        default=400,
        ge=100,
        le=2000,
        title="Characters per evidence item",
        description="Each evidence item is cut here in the belief prompt.",
    )
    turn_chars: int = Field(
        default=600, ge=100, le=3000, title="Characters per turn", description="Each debate turn is cut here in the belief prompt."
    )
    verdict: Literal["calibrated", "published"] = Field(
        default="calibrated",
        title="Whose ruling is the verdict",
        description="calibrated: where the judge's model has a desk calibration, the run's verdict is desk's calibrated reading of the evidence the debate gathered, and the protocol's own ruling (judge, panel, summarizer) is kept and shown beside it; published: the protocol's own ruling, with the calibrated one shown beside it.",
    )
    calibrated_ruling: bool = Field(
        default=True,
        title="Rule on the evidence too",
        description="Where the judge's model has a desk calibration, read the stances of the evidence the debate gathered (desk's contrast question, 2 calls an item) and give the calibrated ruling beside the protocol's own.",
    )
    ruling_evidence: int = Field(
        default=12,
        ge=1,
        le=30,
        title="Evidence the calibrated ruling reads",
        description="Most evidence items whose stances the calibrated ruling reads: those the debaters cited first, then the rest in the order they were found.",
    )
    grounded: Literal["auto", "on", "off"] = Field(
        default="auto",
        title="Debate from desk's exhibits",
        description="on: a debate starts from desk's exhibits and their stances (the same search and readings desk shows), so the arguments cite exhibits the checker has already seen ranked; auto: on for the embedded model, off for others; off: each protocol searches as published.",
    )


class MadConfig(BaseModel):
    """The `mad` baseline: two debaters argue from what they know (no retrieval), a judge rules."""

    rounds: int = Field(default=3, ge=1, le=6, title="Rounds", description="How many rounds the two debaters argue before the judge rules.")
    stop_on_agreement: bool = Field(
        default=False,
        title="Stop on agreement",
        description="End early when both debaters give the same label (the published baseline runs every round).",
    )


class RadarConfig(BaseModel):
    """`radar`: Politician vs Scientist over shared evidence, early stop from label probabilities."""

    top_k: int = Field(
        default=20,
        ge=1,
        le=50,
        title="Shared passages",
        description="How many corpus passages are retrieved once for the claim and shared by all agents.",
    )
    web_results: int = Field(
        default=0,
        ge=0,
        le=20,
        title="Web results",
        description="Web results added to the shared evidence when web search is on (0: corpus only, as published).",
    )
    tau_s: float = Field(
        default=-0.15,
        ge=-1,
        le=1,
        title="Stop margin threshold τs",
        description="Stop early only if p(STOP) - p(CONTINUE) is at least this.",
    )
    tau_v: float = Field(
        default=0.7,
        ge=0,
        le=1,
        title="Confidence threshold τv",
        description="Stop early only if the round judge's top label probability is at least this.",
    )
    early_stop: bool = Field(
        default=True, title="Early stop", description="Run the stop agent and round judge after the opening and the rebuttal."
    )
    top_logprobs: int = Field(
        default=10,
        ge=1,
        le=20,
        title="Top tokens",
        description="How many alternative tokens per position the model reports when label probabilities are read from logprobs.",
    )
    samples: int = Field(
        default=5,
        ge=2,
        le=20,
        title="Samples (fallback)",
        description="Answers sampled and counted when the backend gives no token probabilities.",
    )
    sample_temperature: float = Field(
        default=0.8, gt=0, le=2, title="Sampling temperature (fallback)", description="Temperature of the sampled answers in the fallback."
    )
    explain_verdict: bool = Field(
        default=True,
        title="Judge explains",
        description="After the verdict the judge writes a short explanation (one more model call).",
    )


class MadkeConfig(BaseModel):
    """`madke`: one shared evidence pool, each debater picks from it every turn, a judge checks agreement."""

    corpus_k: int = Field(
        default=10,
        ge=0,
        le=50,
        title="Corpus passages",
        description="Corpus passages retrieved for the claim into the shared pool before the debate.",
    )
    web_k: int = Field(
        default=5,
        ge=0,
        le=20,
        title="Web results",
        description="Web results added to the pool when web search is on; offline the debate goes on without them.",
    )
    max_picks: int = Field(
        default=3,
        ge=1,
        le=10,
        title="Picks per turn",
        description="Most pool items a debater may pick in one turn (it may also say none helps).",
    )
    max_rounds: int = Field(
        default=3, ge=1, le=6, title="Rounds", description="Most debate rounds; the judge may end the debate earlier when the agents agree."
    )


class MermaidConfig(BaseModel):
    """`mermaid`: triplet decomposition, a ReAct loop over tools, and an evidence memory across claims."""

    max_steps: int = Field(
        default=5,
        ge=1,
        le=10,
        title="ReAct steps",
        description="Most reasoning steps (tool calls or the answer); at the cap an answer is forced.",
    )
    use_memory: bool = Field(
        default=True,
        title="Recall memory",
        description="Recall evidence kept from earlier claims (by entity match and embedding similarity).",
    )
    remember: bool = Field(
        default=True, title="Remember evidence", description="Keep the evidence this run finds in the memory for later claims."
    )
    memory_tool: bool = Field(
        default=True,
        title="Memory lookup tool",
        description="Offer memory lookup as a ReAct tool, besides the recall for the claim at the start.",
    )
    memory_k: int = Field(
        default=5, ge=1, le=20, title="Memory items", description="Most memory items recalled for a claim or returned by one memory lookup."
    )
    memory_similarity: float = Field(
        default=0.55,
        ge=0,
        le=1,
        title="Memory similarity",
        description="Least cosine similarity between the claim and a kept item for it to be recalled without an entity match.",
    )
    triplets: str = Field(
        default="",
        title="Triplets (override)",
        description="Your own decomposition, e.g. 'masks | reduce | transmission; masks | protect | wearers'; empty lets the model decompose the claim.",
    )
    topic: str = Field(default="", title="Topic (override)", description="Your own topic for the claim; empty lets the model name it.")


class RunConfig(BaseSettings):
    """Everything one run depends on. Snapshotted into the run record (without secrets)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="ignore")

    protocol: str = Field(default="desk", title="Protocol", description="The debate method to run.")
    corpus: str = Field(default="demo", title="Corpus", description="Local evidence corpus to search.")
    debater: ModelSpec = Field(default_factory=ModelSpec, title="Debater model", description="The model that argues.")
    judge: ModelSpec = Field(default_factory=ModelSpec, title="Judge model", description="The model that rules.")
    scorer: ModelSpec = Field(default_factory=ModelSpec, title="Scorer model", description="The model that scores answers and evidence.")
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig, title="Retrieval", description="How evidence is found.")
    single: SingleConfig = Field(default_factory=SingleConfig, title="single", description="Settings of the single-agent baseline.")
    desk: DeskConfig = Field(
        default_factory=DeskConfig, title="desk", description="Settings of the desk protocol (exhibit stances, calibrated verdict)."
    )
    toolmad: ToolMadConfig = Field(
        default_factory=ToolMadConfig, title="toolmad", description="Settings of the Tool-MAD debate (RAG vs Search, F and AR scores)."
    )
    proclaim: ProClaimConfig = Field(default_factory=ProClaimConfig, title="proclaim", description="Settings of the courtroom protocol.")
    pauses: PauseConfig = Field(
        default_factory=PauseConfig,
        title="Pauses",
        description="Step mode's pauses for the checker.",
    )
    budget: BudgetConfig = Field(
        default_factory=BudgetConfig, title="Spend limits", description="Most calls, tokens or money a run or a batch may spend."
    )
    mad: MadConfig = Field(default_factory=MadConfig, title="mad", description="Settings of the plain debate baseline.")
    radar: RadarConfig = Field(
        default_factory=RadarConfig, title="radar", description="Settings of the Politician-vs-Scientist half-truth debate."
    )
    madke: MadkeConfig = Field(default_factory=MadkeConfig, title="madke", description="Settings of the shared-knowledge-pool debate.")
    mermaid: MermaidConfig = Field(
        default_factory=MermaidConfig, title="mermaid", description="Settings of the triplet + ReAct + memory protocol."
    )
    belief: BeliefConfig = Field(
        default_factory=BeliefConfig,
        title="Belief and rulings",
        description="The judge's belief after each round, the calibrated ruling beside the protocol's own, debates grounded in desk's exhibits.",
    )

    def with_backend(self, backend: str, model: str = "") -> RunConfig:
        """The same config with every role on one backend (the CLI's --backend)."""
        update: dict[str, Any] = {"backend": backend}
        if model:
            update["model"] = model
        return self.model_copy(update={role: getattr(self, role).model_copy(update=update) for role in ROLES})

    def with_overrides(
        self, *, protocol: str | None = None, corpus: str | None = None, backend: str | None = None, model: str = "", no_web: bool = False
    ) -> RunConfig:
        """The same config with the command line's choices applied (unset ones keep the config's)."""
        config = self
        if protocol:
            config = config.model_copy(update={"protocol": protocol})
        if corpus:
            config = config.model_copy(update={"corpus": corpus})
        if backend:
            config = config.with_backend(backend, model)
        if no_web:
            config = config.model_copy(update={"retrieval": config.retrieval.model_copy(update={"web_search": False})})
        return config

    def role(self, name: str) -> ModelSpec:
        spec = getattr(self, name)
        assert isinstance(spec, ModelSpec)
        return spec

    def snapshot(self) -> dict[str, Any]:
        """A JSON-ready copy for the run record: API keys are dropped, not masked; base URLs lose their credentials."""
        data = self.model_dump(mode="json")
        for role in ROLES:
            data[role].pop("api_key", None)
        return _scrub_base_urls(data)

    def secrets(self) -> list[str]:
        """Every API key this run could use (its own and the environment's) and every credential in a base URL."""
        keys = [self.role(role).api_key.get_secret_value() for role in ROLES] + [openai_env()[1]]
        urls = [openai_env()[0], *_base_urls(self.model_dump(mode="json"))]
        keys += [secret for url in urls for secret in url_secrets(url)]
        return sorted({k for k in keys if len(k) >= 4}, key=len, reverse=True)

    @classmethod
    def from_snapshot(cls, data: dict[str, Any]) -> RunConfig:
        """Rebuild a config from a run record (keys come from the environment again)."""
        return cls.model_validate(data)


ROLES: tuple[Literal["debater", "judge", "scorer"], ...] = ("debater", "judge", "scorer")


def _base_urls(data: Any) -> list[str]:
    """Every ``*base_url`` value in a dumped config (the roles' and the panel judges')."""
    if not isinstance(data, dict):
        return []
    found = [v for k, v in data.items() if k.endswith("base_url") and isinstance(v, str) and v]
    return found + [u for v in data.values() for u in _base_urls(v)]


def _scrub_base_urls(data: Any) -> Any:
    if not isinstance(data, dict):
        return data
    return {k: scrub_url(v) if k.endswith("base_url") and isinstance(v, str) else _scrub_base_urls(v) for k, v in data.items()}


class AppSettings(BaseSettings):
    """Where the app keeps its data and which shared services it uses."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore")

    data_dir: Path = Field(default=Path("data"), title="Data folder", description="Chroma index, run database and caches live here.")
    chroma_url: str = Field(
        default="",
        title="Chroma server",
        description="http://host:port of a Chroma server; empty means an embedded store in the data folder.",
    )
    database_url: str = Field(
        default="",
        title="Run database",
        description="SQLAlchemy URL (e.g. postgresql+psycopg://...); empty means SQLite in the data folder.",
    )
    model_cache: Path = Field(
        default=Path.home() / ".cache" / "debatedesk",
        title="Model cache",
        description="Where the embedded model is assembled and the llama.cpp server state is kept.",
    )
    llama_threads: int = Field(
        default=0,
        ge=0,
        le=256,
        title="Embedded model threads",
        description="Threads of the embedded model's llama.cpp server; 0 means one per physical core (llama.cpp's own default). On a quiet 2-core machine 2 threads ran a debate 1.7x faster than 1 (bench/llama_threads.py); on a machine busy with other work, set 1: llama.cpp's threads wait for each other, and one stalled core stalls them all. A running server keeps its threads until `python -m pipelines model stop`.",
    )
    embeddings: Literal["onnx", "torch"] = Field(
        default="onnx",
        title="Embeddings runtime",
        description="What runs MiniLM (search and ingestion): onnx, ONNX Runtime on the same weights exported once to the model cache (about twice as fast here; the same vectors to 1e-6), or torch, sentence-transformers as before. onnx falls back to torch when the export cannot be made.",
    )
    llama_slots: int = Field(
        default=0,
        ge=0,
        le=64,
        title="Embedded model slots",
        description="Calls the embedded model's native llama.cpp server decodes together (continuous batching); 0 means 1 on up to 2 threads (on 2 cores, 4 together gave only 1.07x the tokens per second and batched answers differ from one-at-a-time ones), else one per thread, at most 4. Each slot has the whole context (about 28 KB of memory per token). The Python server has one. A running server keeps its slots until `python -m pipelines model stop`.",
    )
    max_record_mb: float = Field(
        default=20.0,
        gt=0,
        title="Largest record file checked (MB)",
        description="`python -m pipelines verify-record` refuses a larger file before reading it (a record of a long debate is well under 5 MB; a 46 MB file once took 36 s to check).",
    )
    llama_cache_ram: int = Field(
        default=LLAMA_CACHE_RAM_MIB,
        ge=-1,
        title="Embedded model's prompt cache (MiB)",
        description="Host memory llama-server may keep earlier prompts in, to read a prompt that shares their start without computing it again (its --cache-ram); 0 keeps none, -1 sets no limit. llama.cpp's own default, 8192, let the server grow from 2.2 GB to 10.8 GB over 125 claims; 512 was as fast on 20 dev claims and held it at 2.6 GB. A running server keeps its cache size until `python -m pipelines model stop`.",
    )
    llama_server: str = Field(
        default="",
        title="Embedded model server",
        description="Which llama.cpp server runs the embedded model: empty for llama.cpp's own llama-server that `make model` builds (build/llama.cpp/bin; where it is missing, the Python server), `python` for the Python server (llama-cpp-python's, one call at a time), or the path of another llama-server build.",
    )
    public_url: str = Field(
        default="",
        title="Public URL of reports",
        description="Where published reports live (e.g. https://desk.example.org/runs); a ClaimReview's url is this plus the run id.",
    )
    organisation: str = Field(
        default="",
        max_length=200,
        title="Organisation",
        description="The newsroom that publishes the desk's fact-checks: the publisher and an author (with the editor) of every "
        "ClaimReview published from the claims queue. Publishing asks for it when it is empty.",
    )
    users_file: Path | None = Field(
        default=None,
        title="Sign-in users file",
        description="A TOML file of the desk's users (name, role editor or checker, bcrypt password hash; see pipelines/access/users.py). "
        "Set, every page asks to sign in and actions carry the signed-in name; unset (the default), nobody signs in.",
    )
    session_hours: float = Field(
        default=12.0,
        gt=0,
        le=24 * 90,
        title="Sign-in lasts",
        description="Hours a users-file sign-in lasts (across reloads and new tabs) unless the person signs out first.",
    )
    open_desk: bool = Field(
        default=False,
        title="Open desk",
        description="Allow the app to listen on an address other than 127.0.0.1 with nobody signing in: anyone who reaches the "
        "port can then run claims, spend and override verdicts, and every page says so. Off (the default), such an app refuses to "
        "serve until sign-in is configured or it listens on 127.0.0.1.",
    )
    oidc_editors: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        title="OIDC editors",
        description="With an [auth] section in .streamlit/secrets.toml (sign-in through an OpenID Connect provider with st.login): "
        "comma-separated e-mail addresses, or @domain for a whole domain, that sign in as editors.",
    )
    oidc_checkers: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        title="OIDC checkers",
        description="As OIDC editors, for the checker role. Anyone the provider knows but neither list names is refused.",
    )

    @field_validator("oidc_editors", "oidc_checkers", mode="before")
    @classmethod
    def _addresses(cls, value: Any) -> list[str]:
        items = value.split(",") if isinstance(value, str) else [str(v) for v in value or []]
        return [i.strip().lower() for i in items if i.strip()]

    checkcovid_dir: Path = Field(
        default=Path("../shared/data/check-covid"),
        title="Check-COVID folder",
        description="Path to the Check-COVID dataset (corpus.json and the claim files).",
    )
    batch_on_workers: bool = Field(
        default=False,
        title="Batches on workers",
        description="On a shared desk (DEBATEDESK_DATABASE_URL on PostgreSQL): the Batch page submits its claims to the desk's queue in that "
        "database and shows their progress, and `python -m pipelines worker` processes run them (docs/scale.md); closing the tab or "
        "restarting the app loses nothing. Off (the default), or on SQLite, the page runs a batch in the app as before.",
    )
    fake_latency_s: float = Field(
        default=0.0,
        ge=0,
        le=10,
        title="Fake backend's delay",
        description="Seconds the fake backend waits before each answer (0: instant). For demos and browser tests that watch a run as it goes, "
        "and for bench/workers.py: a latency-bound load, as a remote model server gives, to measure workers on.",
    )

    @property
    def sqlite_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'runs.sqlite').resolve()}"


def openai_env() -> tuple[str, str]:
    """The OpenAI base URL and key from the environment (the fallback for empty fields)."""
    return os.environ.get("OPENAI_BASE_URL", ""), os.environ.get("OPENAI_API_KEY", "")


class ConfigError(DebateDeskError):
    """A setting (typed on a page or in a ``DEBATEDESK_*`` variable) is out of its range or malformed; says which and why."""


def load_run_config() -> RunConfig:
    """The run settings of the environment; a bad ``DEBATEDESK_*`` value is a ConfigError naming the variable and its range."""
    try:
        return RunConfig()
    except ValidationError as exc:
        raise ConfigError(f"a setting in the environment is not valid: {describe_invalid(exc, RunConfig, env=True)}") from exc


def describe_invalid(exc: ValidationError, root: type[BaseModel], *, env: bool = False) -> str:
    """Each invalid setting in plain words: its title (and variable, with ``env``), what it must be, and what was given.

    ``Calls per run (DEBATEDESK_BUDGET__MAX_CALLS) must be a whole number from 0 to 100,000; got '-3'``; no pydantic text.
    """
    return "; ".join(_plain_problem(error, root, env=env) for error in exc.errors())


def _plain_problem(error: Any, root: type[BaseModel], *, env: bool) -> str:
    path = [str(p) for p in error["loc"]]
    field, model = None, root
    for part in path:
        info = model.model_fields.get(part) if isinstance(model, type) and issubclass(model, BaseModel) else None
        if info is None:
            break
        field = info
        annotation = info.annotation
        model = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None  # type: ignore[assignment]
    title = field.title if field is not None and field.title else ".".join(path) or "a setting"
    where = f" ({ENV_PREFIX}{'__'.join(path).upper()})" if env and path else f" ({'.'.join(path)})" if path else ""
    given = error.get("input")
    got = f"; got {str(given)[:40]!r}" if given is not None and not isinstance(given, dict) else ""
    allowed = _allowed(field) if field is not None else None
    if allowed is None:  # our own validators' messages (a price list) say what is wrong already
        return f"{title}{where}: {str(error['msg']).removeprefix('Value error, ')}{got}"
    return f"{title}{where} must be {allowed}{got}"


def _allowed(field: Any) -> str | None:
    bounds = {type(m).__name__: m for m in field.metadata}
    low = getattr(bounds.get("Ge"), "ge", None)
    high = getattr(bounds.get("Le"), "le", None)
    above = getattr(bounds.get("Gt"), "gt", None)
    kind = {int: "a whole number", float: "a number", bool: "true or false"}.get(field.annotation, "")
    if not kind:
        if typing.get_origin(field.annotation) is Literal:
            return "one of " + ", ".join(str(a) for a in typing.get_args(field.annotation))
        return None
    if low is not None and high is not None:
        return f"{kind} from {_number(low)} to {_number(high)}"
    if above is not None and high is not None:
        return f"{kind} above {_number(above)} and at most {_number(high)}"
    if low is not None:
        return f"{kind} of at least {_number(low)}"
    return kind


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"
