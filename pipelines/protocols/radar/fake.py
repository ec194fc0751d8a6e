"""How the fake plays radar: label probabilities for the stop agent and the judge, the Politician and the Scientist, the explanation."""

from __future__ import annotations

from pipelines.run.llm.fake.generic import argue
from pipelines.run.llm.fake.prompt import SUPPORT_AT, PromptView, first_sentence
from pipelines.run.llm.fake.registry import choice_responder, text_responder

RADAR_STAGES = ("opening", "rebuttal", "closing")
RADAR_FROM_FEVER = {"SUPPORTS": "TRUE", "REFUTES": "FALSE", "NOT ENOUGH INFO": "HALF-TRUE"}


def _stage_index(view: PromptView) -> int:
    stage = view.field("Stage").lower()
    return RADAR_STAGES.index(stage) if stage in RADAR_STAGES else 0


@choice_responder("STOP", "CONTINUE")
def radar_stop(view: PromptView, options: tuple[str, ...]) -> dict[str, float]:
    # Clearer evidence and a longer debate both make stopping likelier.
    p_stop = min(0.95, 0.3 + 0.45 * view.best_overlap() + 0.15 * _stage_index(view))
    return {"STOP": p_stop, "CONTINUE": 1 - p_stop}


@choice_responder("TRUE", "HALF-TRUE", "FALSE")
def radar_judge(view: PromptView, options: tuple[str, ...]) -> dict[str, float]:
    # The label the evidence points to, held more firmly with clearer evidence and as the debate goes on.
    top_label = RADAR_FROM_FEVER[view.label()]
    top = min(0.92, 0.4 + 0.25 * view.best_overlap() + 0.1 * _stage_index(view))
    rest = 1 - top
    if top_label == "HALF-TRUE":
        return {"TRUE": rest / 2, "HALF-TRUE": top, "FALSE": rest / 2}
    other = "FALSE" if top_label == "TRUE" else "TRUE"
    return {top_label: top, "HALF-TRUE": rest * 2 / 3, other: rest / 3}


@text_responder("RADAR fact-checking debate")
def radar_debater(view: PromptView) -> str:
    argument = argue(view).rsplit("\nLabel:", 1)[0]
    if "'Omitted:'" not in view.text:  # the Politician: the case for the claim
        return argument
    # The Scientist: evidence that touches the claim without settling it is the context it leaves out.
    partial = [eid for eid, score in view.ranked_evidence() if 0.2 <= score < SUPPORT_AT][:2]
    lines = [argument] + [f"Omitted: {first_sentence(view.evidence[eid])} [{eid}]" for eid in partial]
    return "\n".join(lines)


@text_responder("Explain the verdict")
def radar_explanation(view: PromptView) -> str:
    label = view.text.rstrip().rsplit("Explain the verdict", 1)[1].strip(" .")
    reasons = [f"{first_sentence(view.evidence[eid])} [{eid}]" for eid in view.cited()]
    return f"The verdict is {label}. " + (" ".join(reasons) or "The shared evidence does not address the claim directly.")
