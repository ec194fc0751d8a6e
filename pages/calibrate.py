"""Calibrate page: make desk's confidence mean what it says for the model this desk brings, and learn from the editors' reviews."""

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from components import state
from components.eval_charts import build_reliability_lines, build_selective_figure
from components.pages import render_page_header
from components.resources import get_services
from components.sign_in import acting_person, acting_user
from pipelines.calibration.files import SHIPPED, load_shipped
from pipelines.core.config import ROLES, RunConfig
from pipelines.core.errors import DebateDeskError
from pipelines.core.text.safety import escape_markdown
from pipelines.eval import calibrate as cal
from pipelines.eval import metrics
from pipelines.run.llm.registry import backend_names
from pipelines.stages.exhibit_reading import exhibit_settings

state.ensure_framed("pages/calibrate.py")

SETS = {
    "check-covid/train": "Check-COVID train (keep dev for scoring)",
    "check-covid/dev": "Check-COVID dev",
    "upload": "My own labelled JSONL file",
    cal.REVIEWED: "This desk's reviewed claims (an editor's verdict)",
}

services = get_services()
render_page_header("pages/calibrate.py")
user = acting_user()  # the role read again now; on a desk without sign-in, the one person there, who may do everything
editor = acting_person().may("calibrate") and (user is None or user.role == "editor")
st.caption(
    "desk's verdict states a probability. It means what it says only once desk is calibrated for the model that reads the "
    "exhibits: desk reads labelled claims with that model (each claim a stored run, so a calibration cut short goes on where "
    "it stopped), fits the map from its readings to the truth, and checks it on claims it was not fitted on. A model that "
    "cannot tell supported from refuted claims is told so, and nothing is saved."
)
if not editor:
    st.info("🔒 On this desk only an editor calibrates, rolls back or refits; you can look at everything here.")

for message in [state.take_message(state.CALIBRATE_MESSAGE)]:
    if message is not None:
        getattr(st, message[0])(message[1])  # markup: our own messages with escaped parts

base = state.run_settings()
judge = base.role("judge")

# --- 1. the model, the claims, the cost ---------------------------------------------------------
with st.form("calibrate.plan"):
    left, right = st.columns(2)
    backends = backend_names()
    backend = left.selectbox("Judge's backend", backends, index=backends.index(judge.backend) if judge.backend in backends else 0)
    model = left.text_input("Model", value=judge.model, help="The name the endpoint knows the model by; the calibration is kept under it.")
    base_url = left.text_input(
        "Endpoint address",
        value=judge.base_url,
        help="For an OpenAI-compatible server (vLLM, Ollama, llama.cpp): e.g. http://127.0.0.1:8080/v1",
    )
    chosen_set = right.selectbox("Labelled claims", list(SETS), format_func=SETS.get)
    upload = right.file_uploader("Your JSONL file", type=["jsonl"], help='One claim per line: {"claim": "…", "label": "SUPPORTS"}')
    corpora = services.corpus_names()
    corpus = right.selectbox("Corpus for your file", corpora, index=None, placeholder="the corpus desk searches for your claims")
    claims = right.number_input(
        "Claims", min_value=10, max_value=1000, value=120, help="A label-balanced sample; 120 or more for a calibration to trust."
    )
    planned_now = st.form_submit_button("Check the endpoint and the cost", icon="🔎")


def chosen_config() -> RunConfig:
    config = base.with_backend(backend, model) if model else base.with_backend(backend)
    return config.model_copy(update={role: config.role(role).model_copy(update={"base_url": base_url.strip()}) for role in ROLES})


def chosen_claims() -> cal.LabelledSet:
    checkcovid = services.settings.checkcovid_dir
    if chosen_set == "upload":
        if upload is None or corpus is None:
            raise DebateDeskError("choose your JSONL file and the corpus that holds its claims' evidence")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / Path(upload.name).name
            path.write_bytes(upload.getvalue())
            found = cal.labelled_set(str(path), limit=int(claims), settings_checkcovid=checkcovid, store=services.store)
        return cal.LabelledSet(found.name, found.claims, found.three_labels, corpus=corpus)
    if chosen_set == cal.REVIEWED:
        return cal.labelled_set(cal.REVIEWED, limit=int(claims), settings_checkcovid=checkcovid, store=services.store)
    return cal.labelled_set("check-covid", limit=int(claims), settings_checkcovid=checkcovid, split=chosen_set.split("/")[1])


if planned_now:
    state.set_calibration_plan(None)
    try:
        with st.spinner("Asking the endpoint one short question…"):
            state.set_calibration_plan(cal.plan(chosen_config(), chosen_claims(), services, user=user))
    except (DebateDeskError, ValueError) as exc:
        st.error(f"⚠️ {escape_markdown(str(exc))}")

plan: cal.Plan | None = state.calibration_plan()
if plan is not None:
    kind = st.info if plan.probe.logprobs else st.warning
    kind(f"{'✅' if plan.probe.logprobs else '⚠️'} {escape_markdown(plan.cost)}")
    st.caption(  # markup: escaped names and numbers
        f"{len(plan.labelled.claims)} claims: {escape_markdown(plan.labelled.name)} · desk reads {exhibit_settings(plan.config).exhibits} exhibits "
        f"with the {escape_markdown(exhibit_settings(plan.config).reader)} question · kept as {escape_markdown(plan.key)}"
    )
    if editor and st.button("Calibrate", type="primary", icon="🎯"):
        bar = st.progress(0.0, text="Preparing the corpus…")

        def progress(p: cal.Progress) -> None:
            bar.progress(p.fraction, text=f"{p.done} of {p.total} claims · {escape_markdown(p.last[:80])} · {p.eta()}")

        try:
            state.set_calibration_outcome(cal.calibrate(plan, services, user=user, on_progress=progress))
        except (DebateDeskError, ValueError) as exc:
            st.error(f"⚠️ {escape_markdown(str(exc))}")

# --- 2. what the last calibration found -----------------------------------------------------------
outcome: cal.Outcome | None = state.calibration_outcome()
if outcome is not None:
    st.subheader("The last calibration")
    read = outcome.readings
    st.caption(  # markup: counts only
        f"{len(read)} claim{'s' if len(read) != 1 else ''} read ({sum(r.how == 'stored' for r in read)} from earlier runs), "
        f"{outcome.failed} failed."
    )
    if outcome.stopped:
        st.warning(f"⏸️ {escape_markdown(outcome.stopped)}")
    fitted = outcome.fitted
    if fitted is not None:
        cv = fitted.fit.cross_validated
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "claims": fitted.fit.claims,
                        "accuracy": round(cv["accuracy"], 3),
                        "log loss": round(cv["log_loss"], 3),
                        "ECE": round(cv["ece"], 3),
                        "selective acc. @50%": round(cv["selective_50"], 3),
                        "AUC": round(cv["auc"], 3),
                    }
                ]
            ),
            hide_index=True,
        )
        st.caption("Cross-validated (5 folds): each claim scored by a calibration fitted without it. AUC 0.5 is chance.")
        p = np.array(fitted.fit.predicted)
        y = np.array([1.0 if r.claim.label == "SUPPORTS" else 0.0 for r in read])
        confidence = np.maximum(p, 1 - p).tolist()
        correct = ((p >= 0.5) == (y == 1)).tolist()
        diagram, selective = st.columns(2)
        with diagram:
            st.plotly_chart(build_reliability_lines([("cross-validated", fitted.reliability)]))
        with selective:
            st.plotly_chart(build_selective_figure([("cross-validated", metrics.coverage_curve(confidence, correct))]))
        if fitted.refused:
            st.error(f"🚫 {escape_markdown(fitted.refused)}")
    if outcome.saved is not None:
        st.success(f"✅ Saved {escape_markdown(outcome.saved.calibration.name)}: desk uses it from the next run on.")

# --- 3. the kept calibrations and rolling back -------------------------------------------------------
st.header("Calibrations kept for this model")
model_name = cal.judge_model_name(plan.config if plan is not None else base)
reader = exhibit_settings(plan.config if plan is not None else base).reader
versions = list(cal.iter_versions(services, model_name, reader))
shipped = load_shipped(model_name, reader)
rows = [
    {
        "in use": "✅" if used else "",
        "version": v.stem,
        "fitted on": v.calibration.fitted_on,
        **{
            k: v.calibration.settings.get("cross_validated", {}).get(key)
            for k, key in (("log loss", "log_loss"), ("ECE", "ece"), ("AUC", "auc"))
        },
    }
    for v, used in versions
]
rows.append(
    {
        "in use": "" if any(u for _, u in versions) else "✅",
        "version": SHIPPED,
        "fitted on": shipped.fitted_on if shipped else "none shipped for this model: desk's verdicts are uncalibrated",
    }
)
st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")  # plain cells: dataframes show text as text
if editor and versions:
    back_to = st.selectbox(
        "Go back to", [v.stem for v, used in versions if not used] + [SHIPPED], index=None, placeholder="an earlier calibration"
    )
    if st.button("Use it", disabled=back_to is None, icon="↩️"):
        try:
            now = cal.roll_back(services, model_name, reader, user=user, to=back_to or "")
            shown = now if now != SHIPPED else ("the shipped calibration" if shipped else "no calibration (uncalibrated verdicts)")
            state.set_message(
                state.CALIBRATE_MESSAGE, ("success", f"↩️ desk now uses {escape_markdown(shown)} for {escape_markdown(model_name)}.")
            )
        except (DebateDeskError, ValueError) as exc:
            state.set_message(state.CALIBRATE_MESSAGE, ("error", f"⚠️ {escape_markdown(str(exc))}"))
        st.rerun()

# --- 4. learning from the editors ------------------------------------------------------------------
st.header("Learn from this desk's reviews")
reviewed = cal.reviewed_claims(services.store) if services.store is not None else []
st.caption(  # markup: counts and our own text
    f"{len(reviewed)} claim{' has' if len(reviewed) == 1 else 's have'} an editor's SUPPORTS or REFUTES verdict (an override "
    f"on History or a review on the claims queue, resting on this desk's own runs). From {cal.DEFAULT_REFIT_AT} on, an editor can refit "
    "desk's calibration on them: the one in use and the refit are both scored on those claims (the refit cross-validated), and "
    "the better is kept unless you choose otherwise."
)
if editor and len(reviewed) >= cal.DEFAULT_REFIT_AT:
    keep = st.radio(
        "Keep",
        ("better", "refit", "current"),
        horizontal=True,
        format_func={"better": "the better one (lower log loss)", "refit": "the refit", "current": "the one in use"}.get,
    )
    if st.button("Refit on the reviewed claims", icon="🧑‍⚖️"):
        bar = st.progress(0.0, text="Reading the reviewed claims…")
        try:
            refit_plan = cal.plan(
                plan.config if plan is not None else base,
                cal.labelled_set(cal.REVIEWED, limit=None, settings_checkcovid=None, store=services.store),
                services,
                user=user,
            )
            result = cal.refit_on_reviewed(
                refit_plan,
                services,
                user=user,
                choose=keep,  # type: ignore[arg-type]
                on_progress=lambda p: bar.progress(p.fraction, text=f"{p.done} of {p.total} claims · {p.eta()}"),
            )
            state.set_refit_result(result)
        except (DebateDeskError, ValueError) as exc:
            st.error(f"⚠️ {escape_markdown(str(exc))}")
refit = state.refit_result()
if refit is not None:
    comparison, version, now = refit
    st.dataframe(
        pd.DataFrame(
            [
                {"calibration": f"in use: {comparison.current_name}", **{k: round(v, 3) for k, v in comparison.current.items()}},
                {"calibration": "refit (cross-validated)", **{k: round(v, 3) for k, v in comparison.refit.items()}},
            ]
        ),
        hide_index=True,
    )
    if comparison.refitted.refused:
        st.warning(f"⚠️ {escape_markdown(comparison.refitted.refused)}")
    st.info(
        f"Kept: {escape_markdown(version.calibration.name if version else 'the calibration in use')}; desk now uses {escape_markdown(now)}."
    )
