"""The fake's answers where no responder is registered: an argument, a choice, a filled JSON schema."""

from __future__ import annotations

import math
import re
from typing import Any

from pipelines.run.llm.fake.prompt import SUPPORT_AT, PromptView, first_sentence, overlap
from pipelines.run.llm.fake.registry import CHOICE_RESPONDERS


def argue(view: PromptView) -> str:
    """A short free-text argument ending in a label line, like a debater's answer."""
    label = view.label()
    lines: list[str] = []
    for eid in view.cited():
        sentence = first_sentence(view.evidence[eid])
        lines.append(f"{sentence} [{eid}]")
    if not lines:
        lines.append("The evidence retrieved does not address the claim directly.")
    verb = {"SUPPORTS": "supports", "REFUTES": "contradicts", "NOT ENOUGH INFO": "does not settle"}[label]
    lines.append(f"Taken together, the evidence {verb} the claim that {view.claim.rstrip('.') or 'was made'}.")
    return " ".join(lines) + f"\nLabel: {label}"


def choice_distribution(view: PromptView) -> dict[str, float]:
    """The fake's probabilities over the prompt's options: a registered responder's, else generic."""
    options = view.options
    fn = CHOICE_RESPONDERS.get(frozenset(o.upper() for o in options))
    statement = view.field("Statement")
    stating = _stating_item(view, statement, options) if statement else None
    if stating is not None:  # "which item states this statement, or none of them": the item it overlaps most, if enough
        raw = _favouring(stating, options)
    else:
        raw = fn(view, options) if fn is not None else _generic_choice(view, options)
    total = sum(max(0.0, raw.get(o, 0.0)) for o in options) or 1.0
    return {o: max(0.0, raw.get(o, 0.0)) / total for o in options}


def _generic_choice(view: PromptView, options: tuple[str, ...]) -> dict[str, float]:
    # The option naming the fake's own label gets most of the mass; the rest share what is left.
    label = view.label()
    return _favouring(next((o for o in options if o.upper() == label), options[0]), options)


def _favouring(favoured: str, options: tuple[str, ...]) -> dict[str, float]:
    """Most of the mass on ``favoured``; the other options share what is left."""
    rest = (0.4 / (len(options) - 1)) if len(options) > 1 else 0.0
    return {o: 0.6 if o == favoured else rest for o in options}


def _stating_item(view: PromptView, statement: str, options: tuple[str, ...]) -> str | None:
    """The option naming the evidence item holding most of ``statement``'s words, else the "none of them" option."""
    named = dict(re.findall(r"^([A-Z])\. \[(E\d+)\]$", view.text, flags=re.MULTILINE))
    none = re.findall(r"^([A-Z])\. none of them$", view.text, flags=re.MULTILINE)
    if not none or none[-1] not in options:
        return None
    scored = [(overlap(statement, view.evidence.get(eid, "")), letter) for letter, eid in named.items() if letter in options]
    best = max(scored, default=(0.0, none[-1]))
    return best[1] if best[0] >= SUPPORT_AT else none[-1]


def option_tokens(option: str) -> list[str]:
    """How a tokenizer might split an option: words and hyphens apart ("HALF-TRUE" -> HALF, -, TRUE)."""
    return re.findall(r"\s?[A-Za-z0-9]+|[^A-Za-z0-9\s]", option)


# Mass the fake puts on a token that is no option at all, as real models do.
OFF_OPTION_MASS = 0.02


def choice_logprobs(distribution: dict[str, float], answer: str) -> dict[str, Any]:
    """OpenAI-style ``logprobs`` for ``answer``: its first token's alternatives carry ``distribution``."""
    first: dict[str, float] = {}
    for option, p in distribution.items():
        token = option_tokens(option)[0]
        first[token] = first.get(token, 0.0) + p * (1 - OFF_OPTION_MASS)
    first["The"] = OFF_OPTION_MASS
    top = sorted(first.items(), key=lambda kv: -kv[1])
    content = []
    for index, token in enumerate(option_tokens(answer)):
        p = first.get(token, 1e-6) if index == 0 else 0.999
        alternatives = top if index == 0 else [(token, p)]
        content.append(
            {
                "token": token,
                "logprob": math.log(max(p, 1e-9)),
                "top_logprobs": [{"token": t, "logprob": math.log(max(q, 1e-9))} for t, q in alternatives],
            }
        )
    return {"content": content}


def fill_schema(schema: dict[str, Any], view: PromptView, defs: dict[str, Any] | None = None, name: str = "") -> Any:
    """A schema-valid value for any JSON schema, shaped by the prompt where a field name hints how."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return fill_schema(defs[schema["$ref"].split("/")[-1]], view, defs, name)
    if "anyOf" in schema:
        options = [s for s in schema["anyOf"] if s.get("type") != "null"] or schema["anyOf"]
        return fill_schema(options[0], view, defs, name)
    if "enum" in schema:
        options = list(schema["enum"])
        label = view.label()
        return label if label in options else options[0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    score = view.ranked_evidence()[0][1] if view.evidence else 0.5
    if kind == "object":
        props = schema.get("properties", {})
        return {key: fill_schema(sub, view, defs, key) for key, sub in props.items()}
    if kind == "array":
        low, high = schema.get("minItems", 1), schema.get("maxItems", 3)
        count = max(low, min(high, 2))
        return [fill_schema(schema.get("items", {}), view, defs, name) for _ in range(count)]
    if kind in ("number", "integer"):
        low, high = schema.get("minimum", 0), schema.get("maximum", 1)
        value = low + (high - low) * score
        return round(value) if kind == "integer" else round(value, 3)
    if kind == "boolean":
        return score >= SUPPORT_AT
    if "id" in name.lower() and view.cited(1):
        return view.cited(1)[0]
    return first_sentence(next(iter(view.evidence.values()), view.claim or "No content."))
