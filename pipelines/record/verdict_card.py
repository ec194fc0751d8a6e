"""What the verdict card says, read off a run's digest: one label vocabulary, the confidence or why there is none, the exhibits with their quoted sentences, a plain reason, the model's caveat.

Every protocol names its labels its own way (desk SUPPORTS, proclaim SUPPORTED, radar TRUE);
the checker reads one vocabulary (``COMMON_LABELS``, kept in ``pipelines.record.labels`` and
offered here) with the protocol's own word beside it.
Pure: built from a ``RunDigest``, so a live run and a History replay give the same card, and
the page, the exports and the tests read the same fields. Nothing here is escaped: each sink
escapes for itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from corpora.base import split_sentences
from pipelines.calibration.files import calibration_origin
from pipelines.calibration.ground import UNMEASURED
from pipelines.calibration.likeness import far_note
from pipelines.core.domain import Evidence, Verdict
from pipelines.core.errors import UnknownBackendError
from pipelines.core.events import Event, RecordImported, VerdictOverridden
from pipelines.core.text.safety import public_http_url
from pipelines.core.text.stopwords import STOPWORDS
from pipelines.protocols.base import CardFacts, exhibit_reader, find_protocol
from pipelines.record.digest import RunDigest, describe_intervention
from pipelines.record.labels import COMMON_LABELS, CardLabel, canonical, checker_label, common_label, protocol_words
from pipelines.run.llm.registry import get_backend
from pipelines.stages.argument import strip_label_line
from pipelines.stages.exhibit_reading import CALIBRATED, NOT_DEBATED

MAX_EXHIBITS = 3
MAX_QUOTES = 2

POINTS_TO_WORD = {"supported": "supports the claim", "refuted": "contradicts the claim", "unrelated": "does not address the claim"}


@dataclass(frozen=True)
class CardExhibit:
    """An item the verdict rests on: where it is from, a link only when it is a public http(s) page, and its quoted sentences."""

    id: str
    title: str
    source: str
    url: str | None
    quotes: tuple[str, ...]
    stance: str = ""  # "supports the claim" and the like, when the protocol read one


@dataclass(frozen=True)
class AuditEntry:
    """One thing a checker did to this run: when (epoch seconds), who, and what (plain text, not escaped)."""

    at: float
    by: str
    what: str
    event: Event


@dataclass(frozen=True)
class ModelSide:
    """The model's verdict on the card: label, confidence or why there is none, exhibits, reason and detail."""

    label: CardLabel
    confidence: float | None
    confidence_note: str
    exhibits: tuple[CardExhibit, ...]
    exhibits_note: str
    reason: str
    decided_by: str
    detail: tuple[str, ...]
    rulings: str = (
        ""  # both rulings in words when the run has two that differ, e.g. "the panel voted REFUTED; the evidence ... says SUPPORTED, 81%"
    )
    ground: str = ""  # "measured" / "unmeasured": whether the calibrated reading's probability was measured on this kind of evidence
    ground_note: str = ""  # the card's words for it (pipelines/calibration/ground.py)
    reading_note: str = ""  # what was read and what was left unread, with the bound that says the rest could not matter
    far_note: str = ""  # when nothing the search found is near the claim: how near deciding passages were on train claims

    @property
    def unmeasured(self) -> bool:
        """The probability comes from a reader never measured on this ground: the card shows a lean and a ranking, not a frequency."""
        return self.ground == UNMEASURED


@dataclass(frozen=True)
class VerdictCard:
    """The whole card: the checker's verdict when they set one (``checker``), the model's beneath it, the caveat and the audit trail."""

    protocol: str
    model: ModelSide | None
    checker: VerdictOverridden | None
    caveat: tuple[str, str] | None  # (kind: "warning" / "info", text)
    audit: tuple[AuditEntry, ...]  # this desk's own interventions
    imported: RecordImported | None = None  # the run came from a file: who imported it, what the check said
    imported_audit: tuple[AuditEntry, ...] = ()  # what the file says its checkers did: the file's word, not this desk's

    @property
    def label(self) -> CardLabel | None:
        """What the card leads with: the checker's verdict, else the model's."""
        if self.checker is not None:
            return CardLabel.of(self.checker.label)
        return self.model.label if self.model is not None else None


def verdict_card(run: RunDigest) -> VerdictCard | None:
    """The card for ``run`` as far as it has got; None before any verdict (the model's or a checker's)."""
    model_verdict = run.verdict if run.verdict is not None else (run.override.model_verdict if run.override is not None else None)
    if model_verdict is None and run.override is None:
        return None
    return VerdictCard(
        protocol=run.protocol,
        model=_model_side(run, model_verdict) if model_verdict is not None else None,
        checker=run.override,
        caveat=model_caveat(_models(run.config)),
        audit=audit_trail(run),
        imported=run.imported,
        imported_audit=_entries(run.imported_interventions),
    )


def audit_trail(run: RunDigest) -> tuple[AuditEntry, ...]:
    """Every intervention of this desk's checkers, in order: step-mode decisions, strikes, pasted evidence, verdict overrides.

    What an imported file says its checkers did is not here: ``imported_trail`` has it.
    """
    return _entries(run.interventions)


def imported_trail(run: RunDigest) -> tuple[AuditEntry, ...]:
    """What an imported file says its checkers did, in order: the file's word, shown apart from this desk's trail."""
    return _entries(run.imported_interventions)


def imported_summary(run: RunDigest) -> str:
    """An imported run in one line: "imported from FILE by PERSON; the file says Ana Ruiz set REFUTED (why)"; "" for the desk's own."""
    if run.imported is None:
        return ""
    said = [
        f"the file says {o.by or 'someone'} set {common_label(o.label)}" + (f" (“{_plain(o.note, 200)}”)" if o.note else "")
        for o in run.imported_overrides
    ]
    return f"imported from {run.imported.source} by {run.imported.by}; " + ("; ".join(said) or "the file records no checker's verdict")


def _entries(events: list[Event]) -> tuple[AuditEntry, ...]:
    return tuple(AuditEntry(e.at, str(getattr(e, "by", "")), describe_intervention(e, _plain).replace("**", ""), e) for e in events)


def _plain(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat[: limit - 1] + "…" if len(flat) > limit else flat


def model_caveat(models: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """What a checker must know about the models behind a verdict, given as (backend, model) pairs: a fake backend
    is not a model; a model on this machine is private and offline, and the bundled one a weak judge."""
    models = set(models)
    known = set()
    for backend, _ in models:
        try:
            known.add(get_backend(backend))
        except UnknownBackendError:
            continue
    if any(not b.is_real_model for b in known):
        return ("warning", "🧪 fake is not a real model: its answers come from word overlap. For demos and tests only.")
    local = sorted({model for backend, model in models if backend == "embedded"})
    if not local:
        return None
    bundled = get_backend("embedded").default_model
    if set(local) <= {"", bundled}:
        return (
            "info",
            "💻 Qwen2.5-Coder-1.5B runs on this machine: private and offline, but a weak judge. Treat its verdicts as a first pass.",
        )
    names = ", ".join(Path(model or bundled).name.removesuffix(".gguf") for model in local)
    return (
        "info",
        f"💻 {names} runs on this machine: private and offline. Its quality as a judge is not measured here: "
        "treat its verdicts as a first pass.",
    )


def _models(config: dict[str, Any]) -> set[tuple[str, str]]:
    """The (backend, model) pair of each role in a run's stored config."""
    found = set()
    for role in ("debater", "judge", "scorer"):
        spec = config.get(role)
        if isinstance(spec, dict) and spec.get("backend"):
            found.add((str(spec["backend"]), str(spec.get("model") or "")))
    return found


def _model_side(run: RunDigest, verdict: Verdict) -> ModelSide:
    exhibits, note = _exhibits(run, verdict)
    ground = _ground(run, verdict)
    facts = _facts(run, verdict)
    if verdict.confidence is not None:
        unsettled = canonical(verdict.label) == "NOT ENOUGH INFO" and facts.unsettled_confidence_source
        source = facts.unsettled_confidence_source if unsettled else facts.confidence_source
        if ground == UNMEASURED:
            confidence_note = (
                f"a ranking of this claim among others, not a frequency (this reader was not measured on this ground), from {source}"
            )
        else:
            calibration = " (not calibrated: read it as a ranking, not a frequency)" if "uncalibrated" in verdict.decided_by else ""
            confidence_note = f"from {source}{calibration}"
        if run.calibration and run.calibration != "uncalibrated":
            confidence_note += f"; calibration {run.calibration}, {calibration_origin(run.calibration)}"
    else:
        confidence_note = facts.no_confidence
    detail = [f"Decided by {verdict.decided_by}." + (f" Why: {verdict.stop_reason}" if verdict.stop_reason else "")]
    if verdict.rationale:
        detail.append(f"The model's full answer: {strip_label_line(verdict.rationale)}")
    return ModelSide(
        label=CardLabel.of(verdict.label),
        confidence=verdict.confidence,
        confidence_note=confidence_note,
        exhibits=tuple(exhibits),
        exhibits_note=note,
        reason=_reason(run, verdict),
        decided_by=verdict.decided_by,
        detail=tuple(detail),
        rulings=rulings_line(verdict),
        ground=ground,
        ground_note=run.aggregated.ground_note if run.aggregated is not None and ground else "",
        reading_note=reading_note(run),
        far_note=far_note(run.aggregated.nearest, read=run.aggregated.read) if run.aggregated is not None else "",
    )


def _ground(run: RunDigest, verdict: Verdict) -> str:
    """The ground of the verdict's number when it is the calibrated reading's (its label and number are the weighing's), else ''.

    A debate's own ruling (a judge's, a panel's) states a number of its own: the reading's ground is not its ground.
    """
    aggregated = run.aggregated
    if aggregated is None or verdict.confidence is None or not aggregated.ground:
        return ""
    same = verdict.label == aggregated.label and abs(verdict.confidence - aggregated.confidence) < 1e-6
    return aggregated.ground if same else ""


def reading_note(run: RunDigest) -> str:
    """What the exhibits' reading covered: how many exhibits and sentences were read, and why the rest could not matter."""
    aggregated = run.aggregated
    if aggregated is None or not (aggregated.read or aggregated.set_aside):
        return ""
    section = run.config.get(exhibit_reader(), {}) if isinstance(run.config, dict) else {}
    what = "each whole document" if isinstance(section, dict) and section.get("unit") == "document" else "each passage whole"
    aside = _aside_note(aggregated.set_aside, section.get("min_likeness") if isinstance(section, dict) else None, aggregated.read)
    if not aggregated.read:
        return aside.strip()
    if not aggregated.found or aggregated.bound is None:
        return f"Read {aggregated.read} exhibits ({what}).{aside}"
    low, high = aggregated.bound
    left = aggregated.found - aggregated.read
    note = (
        f"Read {aggregated.read} of the {aggregated.found} exhibits found ({what}), best first. The other {left} could not have "
        f"changed the verdict: whatever they say, p(supported) stays between {low:.0%} and {high:.0%}."
    )
    if not (isinstance(section, dict) and section.get("debate") is False):
        # Conflicts are debated: an unread exhibit strong against a strong one read would have started a debate over the two,
        # whose second reading no bound covers (stance_aggregation.settled_bounds; on Check-COVID dev, 1 of 40 short reads).
        note += (
            " Unless one of them contradicts a strong exhibit read here: that would have started a debate, which the bound does not cover."
        )
    return note + aside


def _aside_note(set_aside: int, floor: object, read: int) -> str:
    """The passages the search found and desk did not read, as too far from the claim ('' when none was set aside)."""
    if not set_aside:
        return ""
    than = f" than {floor:.2f}" if isinstance(floor, int | float) else ""
    why = f"further from the claim in meaning{than} (MiniLM likeness; setting: Least likeness to the claim)"
    if not read:
        return f" None of the {set_aside} passages the search found was read: each was {why}."
    were = "was" if set_aside == 1 else "were"
    return f" {set_aside} more passage{'' if set_aside == 1 else 's'} the search found {were} set aside unread, {why}."


def rulings_line(verdict: Verdict) -> str:
    """Both rulings in words when they differ (in the card's vocabulary); '' with one ruling, or two that agree.

    The verdict's own words come from its stop reason's first part when it is the calibrated ruling,
    so the line reads in the order the desk cares about: the debate's ruling, then the evidence.
    """
    other = verdict.beside
    if other is None or common_label(other.label) == common_label(verdict.label):
        return ""
    if verdict.stop_reason.startswith(other.says):  # the calibrated ruling is the verdict: "<the debate's>; <the evidence's>"
        return verdict.stop_reason.split(". The calibrated", 1)[0]
    return f"{other.says}; the verdict is the debate's own ruling, {verdict.label} (setting: belief.verdict)"


def _exhibits(run: RunDigest, verdict: Verdict) -> tuple[list[CardExhibit], str]:
    cited = [run.evidence[c] for c in verdict.cited if c in run.evidence]
    note = ""
    if not cited and run.evidence:
        # The verdict names none: the items the debate cited most are what the checker should read.
        most = sorted(run.cited_by, key=lambda eid: -len(run.cited_by[eid]))
        cited = [run.evidence[eid] for eid in most if eid in run.evidence]
        note = (
            "The verdict names no exhibit; these are the items the arguments cited most."
            if cited
            else "The verdict names no exhibit, and no argument cited one."
        )
    elif not cited:
        note = "No evidence was retrieved: the verdict rests on the arguments alone."
    claim_words = _words(run.claim)
    return [_exhibit(run, e, claim_words) for e in cited[:MAX_EXHIBITS]], note


def _exhibit(run: RunDigest, e: Evidence, claim_words: set[str]) -> CardExhibit:
    quotes = run.quotes.get(e.id) or closest_sentences(e.text, claim_words)
    url = e.url if e.url and public_http_url(e.url) else None
    title = e.title or (e.doc_id or e.source_label)
    return CardExhibit(
        id=e.id,
        title=title,
        source=e.source_label,
        url=url,
        quotes=tuple(quotes[:MAX_QUOTES]),
        stance=POINTS_TO_WORD.get(run.points_to.get(e.id, ""), ""),
    )


def closest_sentences(text: str, claim_words: set[str], limit: int = MAX_QUOTES) -> tuple[str, ...]:
    """The passage's sentences sharing most words with the claim, in the passage's order (its first sentence when none shares a word)."""
    sentences = split_sentences(text)
    if not sentences:
        return ()
    overlap = {i: len(_words(s) & claim_words) for i, s in enumerate(sentences)}
    best = [i for i in sorted(overlap, key=lambda i: (-overlap[i], i))[:limit] if overlap[i] > 0] or [0]
    return tuple(sentences[i] for i in sorted(best))


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS and len(w) > 2}


def _facts(run: RunDigest, verdict: Verdict | None = None) -> CardFacts:
    """What the card says of the run's protocol; a record from a protocol this desk lacks gets the plain defaults.

    A debate that was not run (desk's exhibits settled the claim, or no debate could change their reading) has desk's reading
    for its verdict: the card says what desk's card says of a reading, and why the debate was not run.
    """
    reader = find_protocol(exhibit_reader())
    reading = reader.card if reader is not None else CardFacts()
    if verdict is not None and verdict.decided_by in NOT_DEBATED:
        how = NOT_DEBATED[verdict.decided_by]
        return replace(reading, how_decided=how, how_decided_by={}, debate_note="")
    protocol = find_protocol(run.protocol)
    facts = protocol.card if protocol is not None else CardFacts()
    if verdict is not None and verdict.decided_by == CALIBRATED:  # the debate ran; its ruling is beside, the number is the reading's
        how = f"{facts.how(verdict.decided_by)} {CALIBRATED_HOW}".strip()
        return replace(
            facts,
            how_decided=how,
            how_decided_by={},
            confidence_source=reading.confidence_source,
            unsettled_confidence_source=reading.unsettled_confidence_source,
        )
    return facts


CALIBRATED_HOW = "The verdict is the calibrated reading of the evidence after the debate; the debate's own ruling is kept beside it."


DEBATE_STAGE = "debate"  # the stage of arguing over contested exhibits (a stage with model calls only when it took place)


def _reason(run: RunDigest, verdict: Verdict) -> str:
    """How the verdict was reached, in plain words, then the gist of the model's own answer."""
    facts = _facts(run, verdict)
    aggregated = run.aggregated
    unread = aggregated is not None and not aggregated.read and aggregated.set_aside  # every passage found was set aside
    how = "" if unread else facts.how(verdict.decided_by)  # "each exhibit was read ..." when none was
    gist = _gist(verdict.rationale)
    parts = [p for p in (how, f"In the model's words: “{gist}”" if gist and facts.quotes_model else gist) if p]
    if facts.debate_note and DEBATE_STAGE in run.by_stage:  # a protocol that debates only sometimes (desk) says it did
        parts.append(facts.debate_note)
    if web := _web_note(run, facts):
        parts.insert(1 if how else 0, web)
    return " ".join(parts)


def _web_note(run: RunDigest, facts: CardFacts) -> str:
    """What the card says when a protocol that counts on the web could not search it, for all its web queries or some."""
    if (outage := run.web_outage) is None:
        return ""
    failed, searched = outage
    if failed == searched and not any(e.source == "web" for e in run.evidence.values()):
        return facts.without_web
    return facts.web_partly.format(failed=failed, searched=searched)


def _gist(rationale: str, limit: int = 320) -> str:
    """The first sentences of the model's answer (its label line and a speaker's "Judge 1:" prefix dropped), cut at ``limit``."""
    body = strip_label_line(rationale).strip()
    body = re.sub(r"^[A-Z][\w ]{0,30}:\s+", "", body.split("\n\n")[0])
    sentences = split_sentences(body)
    gist = ""
    for s in sentences:
        if gist and len(gist) + len(s) > limit:
            break
        gist = f"{gist} {s}".strip()
    return gist[: limit - 1] + "…" if len(gist) > limit else gist


__all__ = [
    "COMMON_LABELS",
    "AuditEntry",
    "CardExhibit",
    "CardLabel",
    "ModelSide",
    "VerdictCard",
    "audit_trail",
    "checker_label",
    "closest_sentences",
    "common_label",
    "imported_summary",
    "imported_trail",
    "model_caveat",
    "protocol_words",
    "verdict_card",
]
