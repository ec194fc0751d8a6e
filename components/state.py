"""The one owner of st.session_state: every key is a constant here, read through typed getters.

No other file touches ``st.session_state`` (``tests/components/test_session_state_owner.py`` fails if one does). What
the app keeps has a getter and a setter here; a form's widgets, whose keys are many and made per claim, run or round,
are reached through ``keyed(PREFIX)``: one prefix per form, declared here, and the form's fields named under it.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from components import identity
from pipelines.core.config import BudgetConfig, RunConfig
from pipelines.core.domain import Evidence
from pipelines.core.events import Event, parse_event
from pipelines.core.text.safety import is_invisible, unsafe_char
from pipelines.newsroom.access.users import User
from pipelines.run.llm.connection import ConnectionReport
from pipelines.run.llm.presets import apply_preset
from pipelines.run.runner import RunHandle

CLAIM = "claim_text"
PENDING_CLAIM = "pending_claim"
LAST_RUN_ID = "last_run_id"
LAST_EVENTS = "last_events"
LAST_ERROR = "last_error"
CONFIG_PREFIX = "cfg."
AUDIT_PREFIX = "audit."  # widgets of the audit screens (evidence filters, charts), then a view key
# Durable runs and the checker in the loop
ACTIVE_RUN = "active_run"  # the RunHandle of a run going on in the background (kept across reruns)
CHECKER_NAME = "checker_name"  # kept across pages (widget state is dropped when a page without the widget runs)
CHECKER_NAME_WIDGET = "checker_name.widget"
MAX_CHECKER_NAME = 80
# The Settings page: models per role, search and step mode, kept for the session as one RunConfig (API keys in memory only)
RUN_SETTINGS = "run_settings"
SETTINGS_PREFIX = "settings."  # widget keys of the Settings page
DESK_VERSION = "desk_version"  # the version of the desk's settings the Settings page's form was drawn from
SETTINGS_GENERATION = "settings_generation"  # bumped when a preset or a reset redraws the page's widgets from the stored settings
CONNECTION_PREFIX = "connection."  # the last connection test of each role
PASTED = "pasted_evidence"  # evidence the checker added to the current pause, not yet submitted
REVIEW_ERROR = "review_error"
REVIEW_PREFIX = "review."  # widget keys of the pause form
RESUME_REQUEST = "resume_request"
RESUME_LIMITS = "resume_limits"  # the spend limits asked for with a resume (History's "Resume with these limits")
DEBATE_REQUEST = "debate_request"  # (run id, claim, config snapshot) of a run whose debate was not run: Verify runs it anyway
HISTORY_RUN = "history_run"
HISTORY_STEP = "history_step"
REPLAY_PLAY = "replay_play"  # the Replay page playing a run by itself: on, seconds a step, when it last moved
OVERRIDE_MESSAGE = "override_message"
IMPORT_MESSAGE = "import_message"
COMPARE_WITH = "compare_with"
LAST_COMPARISON = "last_comparison"


SIGNED_IN = "signed_in"  # the User signed in on a shared desk (components.sign_in)
SIGN_IN_MESSAGE = "sign_in_message"

FRAMED = "framed"  # set by app.py: the page runs inside the app's navigation
RETURN_TO = "return_to"  # a page opened by its URL before the navigation existed, to show once it does


def _text(value: object) -> str | None:
    """A kept id or message as text, or None when nothing is kept (None, or an empty string a widget left)."""
    return str(value) if value else None


class Keyed:
    """The widgets of one form in the session, under one prefix (``keyed(QUEUE_PREFIX + claim_id + ".")``): each field
    is named under it, for the widget (``key``), for reading what the person left in it (``get``, ``text``) and for
    emptying or dropping it after the form's action (``clear``, ``forget``). ``name=""`` is the prefix itself: one widget."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def key(self, name: str = "") -> str:
        """The widget key of ``name``, for ``key=``."""
        return self.prefix + name

    def has(self, name: str = "") -> bool:
        return self.prefix + name in st.session_state

    def get(self, name: str = "", default: Any = None) -> Any:
        """What the widget holds now (before it is drawn on this rerun: what the person left in it), or ``default``."""
        return st.session_state.get(self.prefix + name, default)

    def text(self, name: str = "", default: str = "") -> str:
        """A text field's value, stripped."""
        return str(self.get(name, default)).strip()

    def set(self, name: str, value: Any) -> None:
        """Put ``value`` in the widget (before it is drawn, or in its callback)."""
        st.session_state[self.prefix + name] = value

    def setdefault(self, name: str, value: Any) -> Any:
        return st.session_state.setdefault(self.prefix + name, value)

    def clear(self, *names: str) -> None:
        """Empty these text fields (after their action succeeded: a refused one keeps what was typed)."""
        for name in names:
            st.session_state[self.prefix + name] = ""

    def forget(self, *names: str) -> None:
        """Drop these widgets' values: they are drawn afresh from their defaults."""
        for name in names:
            st.session_state.pop(self.prefix + name, None)


def keyed(prefix: str) -> Keyed:
    """The widgets keyed under ``prefix`` (a form's prefix from this module, with what picks one claim, run or round)."""
    return Keyed(prefix)


ONCE_PREFIX = "once."  # what the session has been told once already (resources: the spill's problems)


def first_time(what: str) -> bool:
    """True the first time this session asks about ``what``, False ever after (a warning shown once a session)."""
    if st.session_state.get(ONCE_PREFIX + what):
        return False
    st.session_state[ONCE_PREFIX + what] = True
    return True


def init_state() -> None:
    st.session_state[FRAMED] = True
    st.session_state.setdefault(CLAIM, "")
    st.session_state.setdefault(PENDING_CLAIM, None)
    st.session_state.setdefault(LAST_RUN_ID, None)
    st.session_state.setdefault(LAST_EVENTS, [])
    st.session_state.setdefault(LAST_ERROR, None)
    st.session_state.setdefault(ACTIVE_RUN, None)
    if CHECKER_NAME not in st.session_state:  # a new session: the name this browser gave before (kept by its cookie)
        st.session_state[CHECKER_NAME] = _clean_name(identity.remembered_name())
    st.session_state.setdefault(PASTED, [])
    st.session_state.setdefault(REVIEW_ERROR, None)
    st.session_state.setdefault(RESUME_REQUEST, None)
    st.session_state.setdefault(HISTORY_RUN, None)
    st.session_state.setdefault(OVERRIDE_MESSAGE, None)
    st.session_state.setdefault(IMPORT_MESSAGE, None)
    st.session_state.setdefault(LAST_COMPARISON, [])


def request_run() -> None:
    """on_click of Verify: remember which claim to run; the page starts it on this rerun."""
    st.session_state[PENDING_CLAIM] = st.session_state.get(CLAIM, "")
    st.session_state[LAST_ERROR] = None


def claim_waiting() -> bool:
    """Whether Verify was just pressed (the run starts further down this page's run)."""
    return bool(st.session_state.get(PENDING_CLAIM))


def take_pending_claim() -> str | None:
    claim = st.session_state.get(PENDING_CLAIM)
    st.session_state[PENDING_CLAIM] = None
    return claim


def set_last_run(run_id: str, events: list[Event]) -> None:
    st.session_state[LAST_RUN_ID] = run_id
    st.session_state[LAST_EVENTS] = [e.model_dump(mode="json") for e in events]
    st.session_state[LAST_COMPARISON] = []


def set_last_comparison(runs: list[list[Event]]) -> None:
    """The events of a side-by-side comparison (one list per protocol); replaces the last single run."""
    st.session_state[LAST_COMPARISON] = [[e.model_dump(mode="json") for e in events] for events in runs]
    st.session_state[LAST_EVENTS] = []


def last_comparison() -> list[list[Event]]:
    return [[parse_event(e) for e in events] for events in st.session_state.get(LAST_COMPARISON, [])]


def last_events() -> list[Event]:
    return [parse_event(e) for e in st.session_state.get(LAST_EVENTS, [])]


def set_error(message: str | None) -> None:
    st.session_state[LAST_ERROR] = message


def last_error() -> str | None:
    return _text(st.session_state.get(LAST_ERROR))


def config_value(path: str, default: Any = None) -> Any:
    return st.session_state.get(CONFIG_PREFIX + path, default)


def active_run() -> RunHandle | None:
    handle = st.session_state.get(ACTIVE_RUN)
    return handle if isinstance(handle, RunHandle) else None


def set_active_run(handle: RunHandle | None) -> None:
    previous = active_run()
    if previous is not None and previous is not handle and previous.pending is not None:
        # A paused run nobody will answer now: mark it interrupted at once rather than when its pause times out.
        previous.abandon("the checker started another run while this one was paused; resume it from History")
    st.session_state[ACTIVE_RUN] = handle
    st.session_state[PASTED] = []
    st.session_state[REVIEW_ERROR] = None
    st.session_state[OVERRIDE_MESSAGE] = None


def checker_name() -> str:
    return _clean_name(st.session_state.get(CHECKER_NAME, ""))


def _clean_name(value: object) -> str:
    return " ".join(str(value or "").split())[:MAX_CHECKER_NAME]


def set_checker_name(name: str) -> None:
    st.session_state[CHECKER_NAME] = _clean_name(name)


def signed_in_user() -> User | None:
    user = st.session_state.get(SIGNED_IN)
    return user if isinstance(user, User) else None


def sign_in(user: User) -> None:
    st.session_state[SIGNED_IN] = user
    set_checker_name(user.name)


def sign_out() -> None:
    """Forget who was signed in on this page (the session itself is ended by components.sign_in)."""
    st.session_state.pop(SIGNED_IN, None)
    set_checker_name("")


def prepare_checker_name_widget() -> None:
    """Before the name field renders: show the remembered name (the widget's own state does not survive a page switch)."""
    st.session_state[CHECKER_NAME_WIDGET] = st.session_state.get(CHECKER_NAME, "")


def remember_checker_name() -> None:
    """on_change of the name field (a desk without sign-in): kept for this session and, by the browser's cookie, the next."""
    st.session_state[CHECKER_NAME] = _clean_name(st.session_state.get(CHECKER_NAME_WIDGET, ""))
    identity.remember_name(st.session_state[CHECKER_NAME])


def run_settings() -> RunConfig:
    """The Settings page's choices (models per role, search, step mode) over the defaults and the environment."""
    stored = st.session_state.get(RUN_SETTINGS)
    return stored if isinstance(stored, RunConfig) else RunConfig()


def set_run_settings(config: RunConfig) -> None:
    st.session_state[RUN_SETTINGS] = config


def settings_prefix() -> str:
    """Widget keys of the Settings page. A browser keeps showing a widget's own value while its key stays the same,
    whatever the session state says; so a preset or a reset gives the page new keys, drawn from the stored settings."""
    generation = int(st.session_state.get(SETTINGS_GENERATION, 0))
    return SETTINGS_PREFIX + (f"v{generation}." if generation else "")


def desk_version() -> int | None:
    value = st.session_state.get(DESK_VERSION)
    return int(value) if value is not None else None


def set_desk_version(version: int) -> None:
    st.session_state[DESK_VERSION] = version


def redraw_settings() -> None:
    """The Settings page's widgets drawn again from the stored settings (after another editor saved the desk's)."""
    _redraw_settings()


def _redraw_settings() -> None:
    old = settings_prefix()
    for key in [k for k in st.session_state if str(k).startswith((old, CONNECTION_PREFIX))]:
        del st.session_state[key]
    st.session_state[SETTINGS_GENERATION] = int(st.session_state.get(SETTINGS_GENERATION, 0)) + 1


def choose_preset(name: str) -> None:
    """on_click of the preset button: every role on the preset, the page redrawn from it, old test results dropped."""
    set_run_settings(apply_preset(run_settings(), name))
    _redraw_settings()


def reset_settings() -> None:
    """on_click of Reset: back to the defaults and the environment's settings."""
    st.session_state.pop(RUN_SETTINGS, None)
    st.session_state.pop(DESK_VERSION, None)  # the form starts again from the desk's settings
    _redraw_settings()


def set_connection_report(role: str, report: ConnectionReport | None) -> None:
    st.session_state[CONNECTION_PREFIX + role] = report


def connection_report(role: str) -> ConnectionReport | None:
    value = st.session_state.get(CONNECTION_PREFIX + role)
    return value if isinstance(value, ConnectionReport) else None


def pasted() -> list[Evidence]:
    return list(st.session_state.get(PASTED, []))


def add_pasted(evidence: Evidence) -> None:
    st.session_state[PASTED] = [*pasted(), evidence]


def remove_pasted(index: int) -> None:
    items = pasted()
    if 0 <= index < len(items):
        items.pop(index)
    st.session_state[PASTED] = items


def clear_review() -> None:
    """After a submitted review: forget the form's widgets and pasted items, so the next pause starts clean."""
    for key in [k for k in st.session_state if str(k).startswith(REVIEW_PREFIX)]:
        del st.session_state[key]
    st.session_state[PASTED] = []
    st.session_state[REVIEW_ERROR] = None


def set_review_error(message: str | None) -> None:
    st.session_state[REVIEW_ERROR] = message


def review_error() -> str | None:
    return _text(st.session_state.get(REVIEW_ERROR))


def request_resume(run_id: str, limits: BudgetConfig | None = None) -> None:
    """Resume ``run_id`` on Verify; ``limits``: the run's new spend limits, asked for on History (an editor may raise them)."""
    st.session_state[RESUME_REQUEST] = run_id
    st.session_state[RESUME_LIMITS] = limits


def take_resume_request() -> str | None:
    run_id = st.session_state.get(RESUME_REQUEST)
    st.session_state[RESUME_REQUEST] = None
    return str(run_id) if run_id else None


def take_resume_limits() -> BudgetConfig | None:
    limits = st.session_state.pop(RESUME_LIMITS, None)
    return limits if isinstance(limits, BudgetConfig) else None


def request_debate(run_id: str, claim: str, snapshot: dict[str, Any]) -> None:
    """Run on Verify the debate that ``run_id`` did not run (desk's exhibits settled its claim): the same claim and settings."""
    st.session_state[DEBATE_REQUEST] = (run_id, claim, dict(snapshot))


def take_debate_request() -> tuple[str, str, dict[str, Any]] | None:
    """The run whose debate to run anyway, its claim and its stored settings, once; None when none was asked for."""
    request = st.session_state.pop(DEBATE_REQUEST, None)
    return request if isinstance(request, tuple) and len(request) == 3 else None


HISTORY_PICKER = "history.open"


HISTORY_IMPORT = "history.import"  # History's file box for a run record to import
REPLAY_RUN = "replay.chosen"  # the run open on the Replay page


def replay_run() -> str | None:
    return _text(st.session_state.get(REPLAY_RUN))


def choose_replay_run(run_id: str | None) -> None:
    st.session_state[REPLAY_RUN] = run_id


def history_run() -> str | None:
    return _text(st.session_state.get(HISTORY_RUN))


def open_history_run(run_id: str | None) -> None:
    """History shows this run: its run picker (widget key ``history.open``) keeps its own value across reruns, so set it too.

    Call from a callback or before History draws the picker; Streamlit refuses a widget's value set after it is drawn.
    """
    st.session_state[HISTORY_RUN] = run_id
    st.session_state[HISTORY_PICKER] = run_id


def set_message(key: str, message: tuple[str, str] | None) -> None:
    """A (kind, text) note shown once by the page: kind is success, error or info."""
    st.session_state[key] = message


def take_message(key: str) -> tuple[str, str] | None:
    value = st.session_state.get(key)
    st.session_state[key] = None
    return value if isinstance(value, tuple) else None


# --- Batch and Benchmark pages (read with defaults, so init_state needs no entries for them) ---

BATCH_OUTCOMES = "batch_outcomes"
BATCH_ERROR = "batch_error"
BATCH_PASTE = "batch_paste"
BATCH_WATCHED = "batch_watched"  # the submitted batch (its queue name) the Batch page watches
BENCH_COMPARE = "bench_compare"
BENCH_ERROR = "bench_error"
CORPORA_MESSAGE = "corpora_message"  # what the last ingestion, deletion or indexing did, shown once at the top of Corpora
CORPORA_PREFIX = "corpora."  # widget keys of the Corpora page


def set_batch_outcomes(outcomes: list[Any]) -> None:
    """The finished batch's outcomes (pipelines.run.batch.ClaimOutcome), kept so downloads survive reruns."""
    st.session_state[BATCH_OUTCOMES] = list(outcomes)


def batch_outcomes() -> list[Any]:
    return list(st.session_state.get(BATCH_OUTCOMES, []))


def set_batch_error(message: str | None) -> None:
    st.session_state[BATCH_ERROR] = message


def batch_error() -> str | None:
    return _text(st.session_state.get(BATCH_ERROR))


def set_compared(evaluation_ids: list[str]) -> None:
    """Which past evaluations the Benchmark page compares (the multiselect's state)."""
    st.session_state[BENCH_COMPARE] = list(evaluation_ids)


def compared() -> list[str] | None:
    value = st.session_state.get(BENCH_COMPARE)
    return list(value) if value is not None else None


def set_bench_error(message: str | None) -> None:
    st.session_state[BENCH_ERROR] = message


def bench_error() -> str | None:
    return _text(st.session_state.get(BENCH_ERROR))


def ensure_framed(page_file: str) -> None:
    """Top of every page: a page opened straight from its URL on a fresh server runs without app.py
    (Streamlit's legacy pages/ mode, until a session has called st.navigation). Go through app.py,
    which sets up state and navigation, and come back to this page (with the address's ``?run=``/``?claim=``)."""
    if not st.session_state.get(FRAMED):
        st.session_state[RETURN_TO] = page_file
        st.session_state[RETURN_PARAMS] = {k: st.query_params[k] for k in LINK_PARAMS if k in st.query_params}
        st.switch_page("app.py")


def take_return_to() -> tuple[str, dict[str, str]] | None:
    page = st.session_state.pop(RETURN_TO, None)
    params = st.session_state.pop(RETURN_PARAMS, None) or {}
    return (str(page), dict(params)) if page else None


# --- Links, the claims queue and comments ----------------------------------------------------

RUN_PARAM = "run"  # ?run=ID opens the run on History
CLAIM_PARAM = "claim"  # ?claim=ID opens the claim on the queue page
CHECK_PARAM = "check"  # ?check=ID on Verify: the queued claim's text in the claim box, its run joins that claim
REPLAY_PARAM = "replay"  # ?replay=ID on the Replay page: the run alone, step by step, for a class
LINK_PARAMS = (RUN_PARAM, CLAIM_PARAM, CHECK_PARAM, REPLAY_PARAM)
RETURN_PARAMS = "return_params"
FOLLOWED_PREFIX = "followed."  # the link parameter value this session already followed, per parameter
QUEUE_CLAIM = "queue_claim"  # the claim open on the queue page
QUEUE_MESSAGE = "queue_message"
QUEUE_PREFIX = "queue."  # widget keys of the queue page
QUEUE_TABS = "queue.tabs"  # the queue page's open tab
CHECK_FROM_CLAIM = "check_from_claim"  # the queued claim a run on Verify is started from (its id and text)
COMMENT_MESSAGE = "comment_message"


MAX_LINK_ID = 200


def link_id_problem(value: str) -> str | None:
    """Why a link's id cannot be any id of this desk (a control character such as NUL, a direction override, nothing
    visible, too long), said plainly; None for anything that could be one (looked up as usual: an imported run keeps the
    id its file gave it)."""
    if len(value) > MAX_LINK_ID or unsafe_char(value) is not None or is_invisible(value):
        return (
            "⚠️ This link's id is not an id this desk makes (it holds a control character, nothing visible, or is over "
            f"{MAX_LINK_ID} characters long): check the link you were given."
        )
    return None


def follow_link(param: str) -> str | None:
    """The value of ``?run=``/``?claim=`` when this session has not followed it yet (a link just opened), else None.

    Followed once: choosing another run or claim on the page afterwards is not undone by the address on the next rerun.
    A value no id can be is answered on the page with a warning, and not looked up.
    """
    value = st.query_params.get(param)
    if not value or st.session_state.get(FOLLOWED_PREFIX + param) == value:
        return None
    st.session_state[FOLLOWED_PREFIX + param] = value
    if (problem := link_id_problem(str(value))) is not None:
        st.warning(problem)  # markup: our own words
        return None
    return str(value)


def show_in_address(param: str, value: str | None) -> None:
    """Keep the address on what the page shows, so it can be copied or bookmarked as it is."""
    if value:
        if st.query_params.get(param) != value:
            st.query_params[param] = value
        st.session_state[FOLLOWED_PREFIX + param] = value
    elif param in st.query_params:
        del st.query_params[param]


def show_queue_tab(tab: str) -> None:
    """Open the queue page's tab ``tab`` on its next drawing (before the tabs are drawn, or in a callback)."""
    st.session_state[QUEUE_TABS] = tab


def queue_claim() -> str | None:
    return _text(st.session_state.get(QUEUE_CLAIM))


def open_queue_claim(claim_id: str | None) -> None:
    """Open a claim on the queue page (before its chooser draws: a callback, or the top of the page)."""
    st.session_state[QUEUE_CLAIM] = claim_id
    st.session_state[QUEUE_PREFIX + "open"] = claim_id  # the chooser keeps its own value across reruns: set it too


def take_check_link() -> str | None:
    """The claim id of ``?check=ID`` (a queued claim's **Check it on Verify** link), taken out of the address once read, so
    the next click of the same link fills the box again and a rerun does not undo what the person typed since."""
    value = st.query_params.get(CHECK_PARAM)
    if CHECK_PARAM in st.query_params:
        del st.query_params[CHECK_PARAM]
    if value and (problem := link_id_problem(str(value))) is not None:
        st.warning(problem)  # markup: our own words
        return None
    return str(value) if value else None


def check_on_verify(claim_id: str, text: str) -> None:
    """Verify gets a queued claim's text (before its claim box draws), and the run it starts links to that claim."""
    st.session_state[CHECK_FROM_CLAIM] = (claim_id, text)
    st.session_state[CLAIM] = text


def claim_to_check(text: str) -> str | None:
    """The queued claim a run of ``text`` was started from, if the claim box still holds its text; forgotten once read."""
    value = st.session_state.pop(CHECK_FROM_CLAIM, None)
    if isinstance(value, tuple) and " ".join(value[1].split()) == " ".join(text.split()):
        return str(value[0])
    return None


# --- Calibrate page (read with defaults, so init_state needs no entries for it) ---

CALIBRATE_PLAN = "calibrate_plan"  # the probed plan (pipelines.eval.calibrate.Plan) waiting for the go
CALIBRATE_OUTCOME = "calibrate_outcome"  # the last calibration's outcome, shown until the next
CALIBRATE_REFIT = "calibrate_refit"  # the last refit's comparison and what was kept
CALIBRATE_MESSAGE = "calibrate_message"  # (kind, text) shown once: an error, or what a roll-back did


def set_calibration_plan(plan: Any) -> None:
    st.session_state[CALIBRATE_PLAN] = plan


def calibration_plan() -> Any:
    return st.session_state.get(CALIBRATE_PLAN)


def set_calibration_outcome(outcome: Any) -> None:
    st.session_state[CALIBRATE_OUTCOME] = outcome


def calibration_outcome() -> Any:
    return st.session_state.get(CALIBRATE_OUTCOME)


def set_refit_result(result: Any) -> None:
    st.session_state[CALIBRATE_REFIT] = result


def refit_result() -> Any:
    return st.session_state.get(CALIBRATE_REFIT)
