"""Calibrating desk for a model, on the fake backend: probe, durable readings, the fit, versions, roll-back, refit on reviewed claims."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corpora.base import Document
from corpora.chunking import chunk_documents
from pipelines.calibration.files import (
    SHIPPED,
    Calibration,
    CalibrationFileError,
    CalibrationShelf,
    belief_prompt_sha,
    calibration_key,
    load_calibration,
)
from pipelines.core.config import RunConfig
from pipelines.core.events import BeliefRead, VerdictAggregated
from pipelines.eval import calibrate as cal
from pipelines.newsroom.access.roles import NotAllowedError
from pipelines.newsroom.access.users import User
from pipelines.record.digest import digest
from pipelines.record.verdict_card import verdict_card
from pipelines.run.llm.fake.model import FakeChatModel
from pipelines.run.runner import Services, stream_run
from pipelines.run.step_gate import override_verdict
from pipelines.run.tools.embeddings import Embedder
from tests.fakes import make_services, with_settings

EDITOR = User("erin", "Erin Editor", "editor")
CHECKER = User("carl", "Carl Checker", "checker")
CORPUS = "calib"
# One statement a document, on subjects far apart, none with a word the fake reads as a negation.
FACTS = (
    "Honeybees communicate the direction of flowers through a waggle dance inside the hive",
    "Copper wires carry electrical current in household circuits across Europe",
    "Glaciers in the Alps have retreated sharply since the nineteenth century",
    "Sourdough bread rises because wild yeast ferments sugars in the dough",
    "Octopuses change the colour of their skin using cells called chromatophores",
    "The Danube river flows through ten countries before reaching the Black Sea",
    "Violins are traditionally made from spruce tops and maple backs",
    "Tomato plants need warm soil and long sunny days to ripen their fruit",
    "Lighthouses guided ships along rocky coasts with rotating lenses",
    "Penguins huddle together to keep warm during the Antarctic winter",
    "Volcanic ash enriches farmland soils with minerals over many decades",
    "Marathon runners store glycogen in their muscles before a race",
    "Beavers build dams from branches and mud across small streams",
    "Saffron comes from the dried stigmas of crocus flowers harvested by hand",
)


def negated(fact: str) -> str:
    words = fact.split(" ")
    return " ".join([*words[:2], "do not" if words[1].endswith("s") else "does not", *words[2:]])


@pytest.fixture
def desk_services(tmp_path: Path, embedder: Embedder) -> Services:
    services = make_services(tmp_path / "data", embedder)
    documents = [Document(id=f"doc-{i}", title=f"Note {i}", sentences=(fact + ".",)) for i, fact in enumerate(FACTS)]
    services.index.ingest(CORPUS, chunk_documents(documents))
    return services


def config(**desk: object) -> RunConfig:
    base = RunConfig().with_backend("fake").model_copy(update={"corpus": CORPUS})
    return with_settings(base, "desk", exhibits=3, **desk)


def labelled_file(tmp_path: Path, *, flip: bool = False, twice: bool = False) -> Path:
    """Each fact as a supported claim and its denial as a refuted one; ``flip`` swaps the labels, ``twice`` gives each claim both."""
    rows = []
    for i, fact in enumerate(FACTS):
        pairs = [(fact, "SUPPORTS"), (negated(fact), "REFUTES")]
        if flip:
            pairs = [(text, "REFUTES" if label == "SUPPORTS" else "SUPPORTS") for text, label in pairs]
        if twice:
            pairs = [(fact, "SUPPORTS"), (fact, "REFUTES")]
        rows += [{"id": f"c{i}-{n}", "claim": text, "label": label} for n, (text, label) in enumerate(pairs)]
    path = tmp_path / ("flipped.jsonl" if flip else "twice.jsonl" if twice else "claims.jsonl")
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def planned(services: Services, path: Path | str, run_config: RunConfig | None = None, limit: int | None = None) -> cal.Plan:
    labelled = cal.labelled_set(str(path), limit=limit, settings_checkcovid=None, store=services.store)
    return cal.plan(run_config or config(), cal.LabelledSet(labelled.name, labelled.claims, labelled.three_labels, CORPUS), services)


def test_the_whole_flow_reads_fits_saves_and_desk_uses_it_at_once(desk_services: Services, tmp_path: Path) -> None:
    plan = planned(desk_services, labelled_file(tmp_path))
    assert plan.probe.logprobs and "one call" in plan.cost
    seen: list[cal.Progress] = []
    outcome = cal.calibrate(plan, desk_services, user=EDITOR, on_progress=seen.append)
    assert [p.done for p in seen] == list(range(1, 29)) and seen[-1].seconds_left == pytest.approx(0.0)
    assert "left" in seen[0].eta()
    assert outcome.fitted is not None and outcome.fitted.refused == ""
    scores = outcome.fitted.fit.cross_validated
    assert scores["auc"] > 0.9 and scores["accuracy"] > 0.8, scores
    assert {"log_loss", "ece", "selective_50"} <= set(scores)
    assert outcome.saved is not None
    saved = outcome.saved.calibration
    assert saved.name == f"fake--contrast@{outcome.saved.stem}"
    assert saved.fitted_on.startswith("claims.jsonl: 28 SUPPORT/REFUTE claims")
    assert saved.settings["exhibits"] == 3 and saved.settings["logprobs"] is True and len(saved.settings["runs"]) == 28
    written = desk_services.settings.data_dir / "calibrations" / "fake--contrast" / f"{outcome.saved.stem}.json"
    assert json.loads(written.read_text())["name"] == saved.name

    # desk uses it from the next run on, and the verdict card says where the confidence comes from
    events = list(stream_run(FACTS[0], config(), desk_services))
    aggregated = [e for e in events if isinstance(e, VerdictAggregated)]
    assert aggregated[-1].calibration == saved.name
    card = verdict_card(digest(events))
    assert card is not None and saved.name in card.model.confidence_note and "fitted by this desk" in card.model.confidence_note

    # how well the belief over the exhibits alone told the labels apart is kept, and said with every later belief reading
    measured = saved.settings["belief"]
    assert measured["claims"] == 28 and 0.0 <= measured["auc"] <= 1.0 and measured["prompt_sha"] == belief_prompt_sha()
    weighed = [e for e in events if isinstance(e, BeliefRead)]
    assert weighed and all(r.method == "exhibits" and not r.reliability for r in weighed), "calibrated, desk's belief is its weighing"
    asked = list(stream_run(FACTS[0], with_settings(config(), "belief", desk_weighed=False), desk_services))
    readings = [e for e in asked if isinstance(e, BeliefRead)]
    assert readings and all(f"AUC {measured['auc']:.2f} over 28 claims" in r.reliability for r in readings)


def test_a_desk_calibrates_the_verdict_question_on_its_own_claims_and_its_card_is_then_on_measured_ground(
    desk_services: Services, tmp_path: Path
) -> None:
    """No calibration ships for the verdict question: a desk fits one on its own labelled claims, and its runs use it."""
    verdict = config(reader="verdict", orders=2)
    before = verdict_card(digest(list(stream_run(FACTS[0], verdict, desk_services))))
    assert before is not None and before.model.unmeasured and "No calibration was fitted" in before.model.ground_note
    plan = planned(desk_services, labelled_file(tmp_path), verdict)
    outcome = cal.calibrate(plan, desk_services, user=EDITOR)
    assert outcome.saved is not None and outcome.fitted is not None and outcome.fitted.fit.cross_validated["auc"] > 0.9
    saved = outcome.saved.calibration
    assert saved.name.startswith("fake--verdict@") and saved.settings["reader"] == "verdict"
    assert saved.settings["negation"] is False and saved.settings["shots"] == 0, "it reads no opposite and no worked examples"
    events = list(stream_run(FACTS[0], verdict, desk_services))
    assert not any(getattr(e, "stage", "") == "calibration" for e in events), "the run's settings are the fitted ones"
    assert [e for e in events if isinstance(e, VerdictAggregated)][-1].calibration == saved.name
    after = verdict_card(digest(events))
    assert after is not None and after.model.ground == "measured" and "this desk's claims" in after.model.ground_note
    contrast = [e for e in stream_run(FACTS[0], config(), desk_services) if isinstance(e, VerdictAggregated)]
    assert contrast[-1].calibration != saved.name, "the contrast question does not borrow it"


def test_a_second_call_goes_on_from_the_stored_runs(desk_services: Services, tmp_path: Path) -> None:
    path = labelled_file(tmp_path)
    first = cal.calibrate(planned(desk_services, path, limit=12), desk_services, user=None, save=False)
    assert {r.how for r in first.readings} == {"read"}
    again = cal.calibrate(planned(desk_services, path, limit=16), desk_services, user=None, save=False)
    hows = [r.how for r in again.readings]
    assert hows.count("stored") == 12 and hows.count("read") == 4
    assert {r.run_id for r in first.readings} <= {r.run_id for r in again.readings}
    assert desk_services.store is not None and len(desk_services.store.list_runs()) == 16  # nothing read twice


def test_runs_cut_short_by_a_dead_model_server_are_resumed_by_the_next_call(desk_services: Services, tmp_path: Path) -> None:
    path = labelled_file(tmp_path)
    desk_services.chat_override = FakeChatModel(fail_after=20)  # the server dies during the first claim
    plan = planned(desk_services, path, limit=10)
    stopped = cal.calibrate(plan, desk_services, user=None)
    assert "model server may be down" in stopped.stopped and stopped.saved is None
    assert stopped.failed == cal.GIVE_UP_AFTER
    assert desk_services.store is not None
    cut_short = [r for r in desk_services.store.list_runs() if r.status == "failed"]
    assert cut_short
    desk_services.chat_override = None  # the server is back
    outcome = cal.calibrate(plan, desk_services, user=None, save=False)
    assert outcome.stopped == "" and len(outcome.readings) == 10
    assert sum(r.how == "resumed" for r in outcome.readings) == len(cut_short)


def test_the_spend_limit_holds_for_the_whole_calibration(desk_services: Services, tmp_path: Path) -> None:
    limited = config().model_copy(update={"budget": RunConfig().budget.model_copy(update={"batch_max_calls": 30})})
    outcome = cal.calibrate(planned(desk_services, labelled_file(tmp_path), limited), desk_services, user=None)
    assert "not read" in outcome.stopped and outcome.saved is None
    assert 0 < len(outcome.readings) < 28


def test_an_endpoint_without_token_probabilities_is_found_up_front_and_its_cost_said(desk_services: Services, tmp_path: Path) -> None:
    desk_services.chat_override = FakeChatModel(logprobs=False)
    plan = planned(desk_services, labelled_file(tmp_path), limit=10)
    assert plan.probe.logprobs is False
    per_claim = cal.calls_per_claim(plan.config, logprobs=False)
    assert per_claim == 3 * 2 * cal.SAMPLES + 1
    assert (
        "no token probabilities" in plan.cost
        and f"{per_claim} calls instead of {cal.calls_per_claim(plan.config, logprobs=True)}" in plan.cost
    )
    assert f"{per_claim * 10:,} for 10 claims" in plan.cost


def test_an_endpoint_that_does_not_answer_is_said_plainly_before_anything_runs(desk_services: Services, tmp_path: Path) -> None:
    desk_services.chat_override = FakeChatModel(fail_after=0)
    with pytest.raises(cal.CalibrationError, match="did not answer a first short call"):
        planned(desk_services, labelled_file(tmp_path))
    assert desk_services.store is not None and desk_services.store.list_runs() == []


def test_readings_that_cannot_tell_the_labels_apart_are_refused(desk_services: Services, tmp_path: Path) -> None:
    outcome = cal.calibrate(planned(desk_services, labelled_file(tmp_path, twice=True)), desk_services, user=EDITOR)
    assert outcome.fitted is not None and outcome.fitted.calibration is None
    assert outcome.fitted.fit.cross_validated["auc"] < 0.6
    assert "cannot check claims of this kind" in outcome.fitted.refused
    assert outcome.saved is None and not (desk_services.settings.data_dir / "calibrations").exists()


def test_only_an_editor_calibrates_rolls_back_or_refits_on_a_shared_desk(desk_services: Services, tmp_path: Path) -> None:
    plan = planned(desk_services, labelled_file(tmp_path), limit=10)
    refused = "only an editor may calibrate models; .* is signed in as a checker"
    with pytest.raises(NotAllowedError, match=refused):
        cal.calibrate(plan, desk_services, user=CHECKER)
    with pytest.raises(NotAllowedError, match=refused):
        cal.roll_back(desk_services, "fake", "contrast", user=CHECKER)
    with pytest.raises(NotAllowedError, match=refused):
        cal.refit_on_reviewed(plan, desk_services, user=CHECKER, at_least=1)
    assert desk_services.store is not None and desk_services.store.list_runs() == []  # refused before reading anything


def test_versions_are_kept_and_an_editor_rolls_back_to_an_earlier_one_then_to_the_shipped(tmp_path: Path) -> None:
    shelf = CalibrationShelf(tmp_path)
    key = calibration_key("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "contrast")
    one = Calibration(name="x", model="m", bias=0.1, weights={"net": 1.0}, decide_at=0.6)
    first = shelf.save(key, one, by="Erin")
    second = shelf.save(key, Calibration.from_json({**one.to_json(), "bias": 0.2}), by="Erin")
    assert first.stem != second.stem
    model = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    in_use = load_calibration(model, "contrast", tmp_path)
    assert in_use is not None and in_use.bias == 0.2
    assert shelf.roll_back(key, by="Erin") == first.stem
    in_use = load_calibration(model, "contrast", tmp_path)
    assert in_use is not None and in_use.bias == 0.1
    assert shelf.roll_back(key, by="Erin") == SHIPPED
    shipped = load_calibration(model, "contrast", tmp_path)
    assert shipped is not None and shipped.name.endswith("@2026-11-24")  # the package's default again
    with pytest.raises(CalibrationFileError, match="nothing earlier"):
        shelf.roll_back(key, by="Erin")
    assert shelf.roll_back(key, by="Erin", to=second.stem) == second.stem
    assert [c.why for c in shelf.choices(key)][-1].startswith("rolled back")
    third = shelf.save(key, Calibration.from_json({**one.to_json(), "bias": 0.3}), by="Erin")  # a new fit is used at once
    assert shelf.in_use(key) == third


def test_a_crash_while_writing_leaves_the_kept_calibrations_as_they_were(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shelf = CalibrationShelf(tmp_path)
    one = Calibration(name="x", model="m", bias=0.1, weights={"net": 1.0}, decide_at=0.6)
    kept = shelf.save("m", one, by="Erin")

    def full_disk(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("pipelines.calibration.files.os.replace", full_disk)
    with pytest.raises(CalibrationFileError, match="No space left on device.*unchanged"):
        shelf.save("m", Calibration.from_json({**one.to_json(), "bias": 0.9}), by="Erin")
    assert shelf.in_use("m") == kept and len(shelf.versions("m")) == 1
    assert not list((tmp_path / "calibrations" / "m").glob("*.tmp"))


def test_a_key_cannot_name_a_folder_outside_the_calibrations(tmp_path: Path) -> None:
    with pytest.raises(CalibrationFileError):
        CalibrationShelf(tmp_path).versions("../../etc")
    assert calibration_key("org/Model:7b") == "model_7b"


def review(services: Services, *, flip: bool, editor: str = "Erin Editor") -> None:
    """Every stored run's verdict overridden by an editor with its claim's label (flipped: the desk's own domain disagrees)."""
    assert services.store is not None
    for run in services.store.list_runs(limit=1000):
        supported = not any(w in run.claim.split() for w in ("not",))
        label = "SUPPORTS" if supported != flip else "REFUTES"
        override_verdict(services.store, run.id, label, "reviewed", editor)


def test_refit_on_reviewed_claims_keeps_the_calibration_in_use_where_it_is_better(desk_services: Services, tmp_path: Path) -> None:
    cal.calibrate(planned(desk_services, labelled_file(tmp_path)), desk_services, user=EDITOR)
    in_use = CalibrationShelf(desk_services.settings.data_dir).in_use("fake--contrast")
    review(desk_services, flip=False)
    plan = planned(desk_services, cal.REVIEWED)
    assert len(plan.labelled.claims) == 28 and plan.labelled.name.startswith("the desk's reviewed claims")
    with pytest.raises(cal.CalibrationError, match="a refit needs at least 50"):
        cal.refit_on_reviewed(plan, desk_services, user=EDITOR)
    comparison, version, now = cal.refit_on_reviewed(plan, desk_services, user=EDITOR, at_least=20)
    assert comparison.claims == 28 and comparison.current_name == (in_use.calibration.name if in_use else "")
    if comparison.better == "current":
        assert version is None and in_use is not None and now == in_use.stem
    else:  # the refit can only win on log loss: then it is kept
        assert version is not None and comparison.refit["log_loss"] < comparison.current["log_loss"]


def test_refit_on_a_shifted_desk_beats_the_calibration_fitted_elsewhere_and_is_kept(desk_services: Services, tmp_path: Path) -> None:
    """The desk's editors rule the other way from the set the calibration was fitted on: the refit wins, and desk uses it."""
    cal.calibrate(planned(desk_services, labelled_file(tmp_path)), desk_services, user=EDITOR)
    before = CalibrationShelf(desk_services.settings.data_dir).in_use("fake--contrast")
    assert before is not None
    review(desk_services, flip=True)
    plan = planned(desk_services, cal.REVIEWED)
    comparison, version, now = cal.refit_on_reviewed(plan, desk_services, user=EDITOR, at_least=20)
    assert comparison.current["accuracy"] < 0.3 and comparison.refit["accuracy"] > 0.8
    assert comparison.better == "refit" and version is not None and now == version.stem
    assert "refitted on reviewed claims" in CalibrationShelf(desk_services.settings.data_dir).choices("fake--contrast")[-1].why
    # the editor may keep the one in use all the same
    comparison, kept, now = cal.refit_on_reviewed(plan, desk_services, user=EDITOR, at_least=20, choose="current")
    assert kept is None and now == version.stem


def test_the_cli_plans_calibrates_lists_and_rolls_back(
    desk_services: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipelines.cli.main import main

    data_dir = desk_services.settings.data_dir
    monkeypatch.setenv("DEBATEDESK_DATA_DIR", str(data_dir))
    path = labelled_file(tmp_path)
    common = ["calibrate", "--backend", "fake", "--dataset", str(path), "--corpus", CORPUS, "--limit", "20"]
    assert main([*common, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "gives token probabilities" in out and "kept under fake--contrast" in out
    assert main([*common, "--yes"]) == 0
    out = capsys.readouterr().out
    assert "cross-validated on the claims read" in out and "AUC" in out and "saved fake--contrast@" in out
    assert main(["calibrate", "--backend", "fake", "--list"]) == 0
    assert capsys.readouterr().out.startswith("* ")
    assert main(["calibrate", "--backend", "fake", "--rollback"]) == 0
    assert "shipped calibration" in capsys.readouterr().out


def test_a_claim_whose_run_found_no_exhibit_is_not_read_again_on_every_call(
    desk_services: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cal, "round_one_stances", lambda events: ())  # as if the search had found nothing
    plan = planned(desk_services, labelled_file(tmp_path), limit=2)
    first, _, failed = cal.read_claims(plan.labelled.claims, plan.config, desk_services)
    assert first == [] and failed == 2
    again, _, failed = cal.read_claims(plan.labelled.claims, plan.config, desk_services)
    assert again == [] and failed == 2
    assert desk_services.store is not None and len(desk_services.store.list_runs()) == 2, "each claim was read once"
