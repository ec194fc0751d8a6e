"""Seen before? on the claims queue: what a claim just added may repeat, the earlier fact-check a claim is joined to (its
verdict a proposal, never this desk's rating), the nearest ones on demand, and other organisations' ClaimReviews read in.

The matching is ``pipelines.newsroom.matching``; every text shown here (a claim, an organisation, a rating, an address)
came from a person or another site's file and is escaped where it lands.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd
import streamlit as st

from components import state
from components.resources import get_services
from pipelines.core.config import AppSettings
from pipelines.core.text.safety import escape_markdown, public_http_url
from pipelines.newsroom.access.users import User
from pipelines.newsroom.matching import Match, check_on_intake, earlier_checks, nearest, thresholds_of
from pipelines.newsroom.queue import ClaimQueue, QueueClaim
from pipelines.newsroom.reviews_in import OutsideReviews, read_reviews

K = "queue.seen."


def on_intake(queue: ClaimQueue, claims: Sequence[QueueClaim], user: User) -> str:
    """Match each claim just added; the words to add to the page's message (empty when nothing was close)."""
    outside = OutsideReviews(queue.engine).all()
    embedder, thresholds = get_services().embedder, thresholds_of(AppSettings())
    found: list[tuple[QueueClaim, Match]] = []
    for claim in claims:
        matches = check_on_intake(claim, queue, outside, embedder, user, thresholds=thresholds)
        if matches and matches[0].level != "nearest":
            found.append((claim, matches[0]))
    if not found:
        return ""
    if len(claims) == 1:
        match = found[0][1]
        what = "Joined to an earlier fact-check" if match.level == "join" else "Seen before?"
        return f"  \n🔁 {what}: {escape_markdown(match.describe())} — “{escape_markdown(match.checked.text[:120])}”"
    return f"  \n🔁 {len(found)} of them may repeat earlier fact-checks: open each to see which."


def describe_line(match: Match) -> str:
    """A match for the page, escaped: its words, its claim and where to read it."""
    c = match.checked
    where = f" · [read it]({c.link})" if c.link and public_http_url(c.link) else ""  # a public address we checked
    return f"**{escape_markdown(match.describe())}**  \n“{escape_markdown(c.text[:300])}”{where}"


Act = Callable[[Callable[[User], str]], None]  # the queue page's one way to act (components.claim_queue.act): the person, a message


def render_seen_before(queue: ClaimQueue, claim: QueueClaim, act: Act) -> None:
    """On an open claim: the earlier fact-check it is joined to, and the nearest ones on demand."""
    checks = earlier_checks(queue.find(limit=5000), OutsideReviews(queue.engine).all())
    if claim.repeats:
        joined = next((c for c in checks if c.key == claim.repeats), None)
        if joined is None:
            st.caption("🔁 Joined to an earlier fact-check that is no longer here.")
        else:
            score = f"similarity {claim.repeats_score:.2f}" if claim.repeats_score is not None else "joined by hand"
            st.info(  # markup: escaped texts and names, a verdict as written, our words
                f"🔁 **Repeats an earlier fact-check** ({score}): {escape_markdown(joined.source)} rated it "
                f"**{escape_markdown(joined.verdict)}**{f' on {escape_markdown(joined.date)}' if joined.date else ''}.  \n"
                f"“{escape_markdown(joined.text[:300])}”  \nA proposal for the checker, not this desk's rating."
            )
        st.button("Part them", key=f"{K}part.{claim.id}", on_click=act, args=(_join(queue, claim, "", None),))
    if not st.toggle("Find earlier fact-checks of this claim", key=f"{K}find.{claim.id}"):
        return
    candidates = [c for c in checks if c.key != f"claim:{claim.id}"]
    if not candidates:
        st.caption("The desk has no earlier fact-checks yet: reviewed claims, and other organisations' reviews read in.")
        return
    matches = nearest(claim.text, candidates, get_services().embedder, thresholds=thresholds_of(AppSettings()))
    for n, match in enumerate(matches):
        kind = {"join": "🟢 very close", "suggest": "🟡 close", "nearest": "⚪ nearest"}[match.level]
        cols = st.columns([8, 2])
        cols[0].markdown(f"{kind} · {describe_line(match)}")  # markup: describe_line escapes every text it shows
        if match.checked.key != claim.repeats and match.level != "nearest":
            cols[1].button("Join", key=f"{K}join.{claim.id}.{n}", on_click=act, args=(_join(queue, claim, match.checked.key, match.score),))


def _join(queue: ClaimQueue, claim: QueueClaim, key: str, score: float | None) -> Callable[[User], str]:
    def action(user: User) -> str:
        queue.set_repeats(claim.id, user, key, score)
        return "Joined to the earlier fact-check." if key else "Parted from the earlier fact-check."

    return action


def render_outside_reviews(queue: ClaimQueue, act: Act) -> None:
    """Other organisations' ClaimReviews: read a JSON-LD file in, and search what was read."""
    st.caption(
        "Fact-checks other organisations published, as ClaimReview JSON-LD (one review, a list, a `@graph`, a DataFeed, or "
        "JSON Lines). Kept as their reviews, never as this desk's verdicts, and matched against every claim added."
    )
    st.file_uploader("ClaimReview file", key=K + "file", help="A .json, .jsonld or .jsonl file of ClaimReview objects.")
    st.button("📥 Read the reviews in", key=K + "file.go", on_click=act, args=(_read_in(queue),))
    library = OutsideReviews(queue.engine)
    needle = st.text_input("Find a review (claim, organisation or claimant)", key=K + "search")
    found = library.search(needle) if needle.strip() else library.all(limit=200)
    if not found:
        st.caption("No review read in yet." if not needle.strip() else "No review matches.")
        return
    table = pd.DataFrame(
        [{"organisation": r.organisation, "rating": r.rating, "date": r.published_on, "claim": r.claim_text, "link": r.url} for r in found]
    )
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        column_config={"link": st.column_config.LinkColumn("link"), "claim": st.column_config.TextColumn("claim", width="large")},
    )


def _read_in(queue: ClaimQueue) -> Callable[[User], str]:
    def action(user: User) -> str:
        upload = state.keyed(K).get("file")
        if upload is None:
            return "Choose a ClaimReview file first."
        reviews = read_reviews(upload.getvalue(), upload.name)  # ReviewsFileError: said plainly by act, nothing stored
        added, already = OutsideReviews(queue.engine).add(reviews, by=user.name, source_file=upload.name)
        names = ", ".join(sorted({r.organisation for r in reviews}))
        return (
            f"Read {len(reviews)} review{'s' if len(reviews) != 1 else ''} from {escape_markdown(upload.name)} "
            f"({escape_markdown(names[:200])}): {added} added, {already} already here."
        )

    return action
