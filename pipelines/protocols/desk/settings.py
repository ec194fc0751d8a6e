"""`desk`'s settings: its section of ``RunConfig`` (composed from the protocol registry, see pipelines/config.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pipelines.protocols.base import ProtocolSettings

StanceReader = Literal["both", "separate", "contrast", "verdict"]  # what desk asks of each exhibit (pipelines/stages/stance.py)
CONTRAST_SHARE = 0.3  # the contrast question's weight with the reader "both", fitted on Check-COVID train (pipelines/calibration)
MIN_LIKENESS = 0.15  # the highest multiple of 0.05 keeping 99% of the deciding documents among the exhibits on two beats' train claims


class DeskConfig(ProtocolSettings):
    """`desk`: exhibits read for their stance from label probabilities, a calibrated verdict, a debate only where exhibits conflict."""

    exhibits: int = Field(default=25, ge=1, le=30, title="Exhibits")
    """Most passages read for their stance (from the claim's search, its rewrites and the web), best first. On Check-COVID dev the deciding abstract was among the first 25 for 0.93 of claims, among the first 5 for 0.74; each exhibit costs about 1.5 s on the embedded model."""
    rewrites: int = Field(default=0, ge=0, le=5, title="Query rewrites")
    """The model rewrites the claim into this many search queries, each searched too (one extra call)."""
    reader: StanceReader = Field(default="contrast", title="Stance question")
    """contrast: the claim and its opposite are both answers and the model says which one the exhibit supports, or neither (the opposite is always written; 2 calls an exhibit, so 25 exhibits take about 1.5 times as long as 'both' takes for 5; use 2 option orders with it); separate: the exhibit is read against the claim (and against its opposite when 'Read the claim's opposite too' is on), each time supports / contradicts / does not address; both: the separate questions, then the contrast one in 2 orders, weighed by 'Contrast question's share' (the best verdict over 5 exhibits on Check-COVID train, 8 calls an exhibit; use 3 option orders and 5 exhibits with it); verdict: a fact-checker's question, whether the exhibit shows the claim accurate, inaccurate or does not say (2 calls an exhibit, no opposite): on the deciding passage of political rulings and Wikipedia sentences it told supported from refuted claims better than contrast, as well on abstracts, but over 10 retrieved exhibits of 40 political claims no better (AUC 0.67 against 0.70), and no calibration ships for it, so its probability is a ranking until this desk calibrates it on its own claims (python -m pipelines calibrate)."""
    contrast_share: float = Field(default=CONTRAST_SHARE, ge=0.0, le=1.0, title="Contrast question's share")
    """With the stance question 'both': the contrast question's weight in each exhibit's stance (fitted on Check-COVID train)."""
    orders: Literal[1, 2, 3, 6] = Field(default=2, title="Option orders")
    """How many orders of the answer options each exhibit is read in; averaging them cancels the model's preference for a position (separate, 3: each answer takes each position once; contrast, 2: the claim and its opposite swap letters)."""
    unit: Literal["passage", "document"] = Field(default="passage", title="Read each exhibit as")
    """passage (the retrieved passage, a few sentences) or document (the whole document it comes from, cut at 2,400 characters)."""
    negation: bool = Field(default=True, title="Read the claim's opposite too")
    """For the separate question: the model writes the claim's opposite (one call) and every exhibit is read against it as well, its supports counted as the claim's contradicts: this cancels the model's lean towards one answer, at twice the reading calls. The contrast question always reads the opposite; the verdict question never does."""
    shots: int = Field(default=0, ge=0, le=3, title="Worked examples")
    """Worked examples from Check-COVID train shown before each reading (one passage that supports its claim, one that does not address it, one that contradicts it)."""
    min_likeness: float = Field(default=MIN_LIKENESS, ge=0.0, le=1.0, title="Least likeness to the claim")
    """An exhibit the search found whose passage is further from the claim in meaning than this (MiniLM cosine) is set aside unread, and the card counts it: on a corpus with nothing on the claim the search still returns its 25 nearest passages, and this model reads some of them as support (a passage on the Moon landings 'supported' a claim about hand washing). 0.15 keeps every deciding document of 110 Check-COVID train claims and of 400 LIAR-PLUS train claims; 0 reads every exhibit found (docs/measurements/2026-12-05-exhibit-likeness.md). What the checker searched for or pasted is always read."""
    quotes: int = Field(default=2, ge=1, le=5, title="Quoted sentences")
    """Sentences quoted from each exhibit (those closest to the claim)."""
    stop_early: bool = Field(default=True, title="Stop when settled")
    """Read the exhibits best first and stop once the verdict cannot change whatever the unread ones say: p(supported) is bounded over every stance they could take, and the card shows the bound. Exhibits a checker pasted are always read. On Check-COVID dev it read 17% fewer exhibits with every verdict the same (docs/measurements/2026-12-02-reading-cut.md)."""
    debate: bool = Field(default=True, title="Debate conflicts")
    """When strong exhibits point both ways, two advocates argue from their side's exhibits and the contested exhibits are read again in the light of both."""
    strong_at: float = Field(default=0.5, ge=0, le=1, title="Strong exhibit")
    """An exhibit counts as strong for a side when its probability of that stance is at least this."""
    decide_at: float = Field(default=0.0, ge=0, le=1, title="Least confidence")
    """NOT ENOUGH INFO when the calibrated probability of the likelier side is below this (0: the calibration file's own threshold)."""
    argument_tokens: int = Field(default=120, ge=32, le=600, title="Argument length")
    """Most tokens an advocate may write."""
