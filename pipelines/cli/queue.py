"""``python -m pipelines queue ...``: the desk's claims queue from the command line, and "seen before?" on every claim added.

    python -m pipelines queue add "TEXT" [--claimant NAME] [--appearance URL] [--language xx] [--json]
    python -m pipelines queue list [--status new] [--assignee NAME] [--json]
    python -m pipelines queue show ID [--json]
    python -m pipelines queue assign ID NAME
    python -m pipelines queue import FILE            (claims: .csv, .jsonl or .txt, as the queue page takes them)
    python -m pipelines queue import-reviews FILE    (other organisations' ClaimReview JSON-LD, one or a feed)
    python -m pipelines queue seen "TEXT" [--json]   (the earlier fact-checks nearest a claim, without adding it)

With a users file every change acts as the account named by ``--by`` (its password asked for, or DEBATEDESK_PASSWORD).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pipelines.cli.acting import BY_HELP, acting_person
from pipelines.core.errors import DebateDeskError
from pipelines.newsroom.access.users import User

MAX_FILE_BYTES = 20 * 1024 * 1024


def add_queue_command(sub: Any) -> None:
    queue = sub.add_parser("queue", help="the desk's claims queue: add, list, show, assign, import; 'seen before?' on each claim")
    verbs = queue.add_subparsers(dest="verb", required=True)

    add = verbs.add_parser("add", help="add a claim; prints its id and the earlier fact-checks it may repeat")
    add.add_argument("text")
    add.add_argument("--claimant", default="", help="who made the claim")
    add.add_argument("--appearance", default="", help="where it appeared (a public http(s) address)")
    add.add_argument("--appeared-on", default="", help="when it appeared (YYYY-MM-DD)")
    add.add_argument("--language", default="", help="its language (ISO 639: en, es...); told from the text when not given")
    add.add_argument("--json", action="store_true", help='one JSON object: {"id": ..., "matches": [...]}')
    add.add_argument("--by", default="", help=BY_HELP)
    add.set_defaults(handler=_add)

    listing = verbs.add_parser("list", help="the queue's claims, newest first")
    listing.add_argument("--status", default="", help="new, checking, in review, published or dismissed")
    listing.add_argument("--assignee", default="")
    listing.add_argument("--limit", type=int, default=100)
    listing.add_argument("--json", action="store_true", help="one JSON object a line")
    listing.set_defaults(handler=_list)

    show = verbs.add_parser("show", help="one claim: its fields, runs, review and history")
    show.add_argument("id")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=_show)

    assign = verbs.add_parser("assign", help="give a claim to someone (an empty name takes it back)")
    assign.add_argument("id")
    assign.add_argument("assignee")
    assign.add_argument("--by", default="", help=BY_HELP)
    assign.set_defaults(handler=_assign)

    imports = verbs.add_parser("import", help="add the claims of a file (.csv with a 'claim' column, .jsonl, or .txt a claim a line)")
    imports.add_argument("file", type=Path)
    imports.add_argument("--by", default="", help=BY_HELP)
    imports.set_defaults(handler=_import)

    reviews = verbs.add_parser("import-reviews", help="read other organisations' ClaimReview JSON-LD (one, a list, a @graph or a DataFeed)")
    reviews.add_argument("file", type=Path)
    reviews.add_argument("--by", default="", help=BY_HELP)
    reviews.set_defaults(handler=_import_reviews)

    seen = verbs.add_parser("seen", help="the earlier fact-checks nearest a claim (the desk's own and imported ones), nothing added")
    seen.add_argument("text")
    seen.add_argument("--json", action="store_true")
    seen.set_defaults(handler=_seen)


def _user(by: str) -> User:
    """Who acts: with a users file, the account whose password was given; else the name given, holding every role."""
    return user_of(acting_person(by, "comment"))  # adding and assigning claims is anyone's on the desk


def user_of(person: Any) -> User:
    """The queue's person for who acts from the command line (a Person proven by a password, or the name given)."""
    if isinstance(person, str):
        name = " ".join(person.split()) or "the command line"
        return User(username=name.lower(), name=name, role="editor")
    return User(username=person.account or person.name, name=person.name, role=person.role or "checker")


def join_queue(engine: Any, run_id: str, claim: str, person: Any) -> str:
    """A run from the command line joins its queued claim (or makes one), as a run from the page does; why not, plainly."""
    from sqlalchemy.exc import SQLAlchemyError

    from pipelines.newsroom.queue import ClaimQueue

    try:
        joined = ClaimQueue(engine).link_run(run_id, claim, user_of(person))
    except (DebateDeskError, SQLAlchemyError, OSError) as exc:
        return f"the run is stored, but it did not join the claims queue: {exc}"
    return f"in the claims queue as {joined.id} ({joined.status})"


def join_queue_batch(engine: Any, runs: list[tuple[str, Any]], person: Any) -> tuple[int, list[str]]:
    """Each batch row's run joins its queued claim (or makes one, with the row's url, claimant and the rest), as a batch on
    the page does: how many joined, and what could not be done, or was left out, plainly, a line each."""
    from sqlalchemy.exc import SQLAlchemyError

    from pipelines.newsroom.intake import details_of_item
    from pipelines.newsroom.queue import ClaimQueue

    queue, user, said, joined = ClaimQueue(engine), user_of(person), [], 0
    for run_id, item in runs:
        details, left_out = details_of_item(item)
        said += [f"{problem}; left out of the claims queue" for problem in left_out]
        try:
            queue.link_run(run_id, item.claim, user, details=details)
            joined += 1
        except (DebateDeskError, SQLAlchemyError, OSError) as exc:
            said.append(f"claim {item.index + 1} (id {item.id!r}): the run is stored, but it did not join the claims queue: {exc}")
    return joined, said


def _open() -> tuple[Any, Any, Any]:
    from pipelines.core.config import AppSettings
    from pipelines.newsroom.queue import ClaimQueue
    from pipelines.newsroom.reviews_in import OutsideReviews
    from pipelines.record.store import RunStore

    settings = AppSettings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    store = RunStore(settings.sqlite_url)
    if settings.webhook_url:  # every change, once stored, to the desk's chat tool, as the app sends it
        from pipelines.newsroom.notices import Webhook, attach_webhook

        attach_webhook(store.engine, Webhook(settings.webhook_url, settings.data_dir, wait=True))
    return ClaimQueue(store.engine), OutsideReviews(store.engine), settings


def _matches(text: str, queue: Any, outside: Any, settings: Any) -> list[Any]:
    from pipelines.newsroom.matching import earlier_checks, nearest, thresholds_of
    from pipelines.run.tools.embeddings import default_embedder

    checked = earlier_checks(queue.find(limit=5000), outside.all())
    return nearest(text, checked, default_embedder(), thresholds=thresholds_of(settings)) if checked else []


def _match_json(match: Any) -> dict[str, Any]:
    c = match.checked
    return {
        "score": match.score,
        "level": match.level,
        "verdict": c.verdict,
        "date": c.date,
        "source": c.source,
        "link": c.link,
        "claim": c.text,
        "own": c.own,
        "key": c.key,
    }


def _print_matches(matches: list[Any]) -> None:
    shown = [m for m in matches if m.level != "nearest"]
    if not shown:
        print(
            "seen before: nothing this desk or an imported review checked is close"
            + (f" (nearest {matches[0].score:.2f})" if matches else "")
        )
        return
    for m in shown:
        what = "joined to" if m.level == "join" else "may repeat"
        print(f"{what}: {m.checked.text[:120]}")
        print(f"    {m.describe()}{f' · {m.checked.link}' if m.checked.link else ''}")


def _add(args: argparse.Namespace) -> int:
    from pipelines.newsroom.matching import check_on_intake, thresholds_of
    from pipelines.newsroom.queue import Appearance, NewClaim
    from pipelines.run.tools.embeddings import default_embedder

    user = _user(args.by)
    queue, outside, settings = _open()
    thresholds = thresholds_of(settings)
    appearance = Appearance(url=args.appearance, on=args.appeared_on, claimant=args.claimant)
    claim = queue.add(NewClaim(args.text, appearance, language=args.language), user)
    matches = check_on_intake(claim, queue, outside.all(), default_embedder(), user, thresholds=thresholds)
    claim = queue.get(claim.id) or claim
    if args.json:
        shown = [_match_json(m) for m in matches if m.level != "nearest"]
        print(json.dumps({"id": claim.id, "language": claim.language, "repeats": claim.repeats, "matches": shown}, ensure_ascii=False))
    else:
        print(f"added {claim.id}{f' ({claim.language})' if claim.language else ''}: {claim.text[:120]}")
        _print_matches(matches)
    return 0


def _list(args: argparse.Namespace) -> int:
    from pipelines.newsroom.queue import QueueFilter

    queue, _, _ = _open()
    where = QueueFilter(statuses=(args.status,) if args.status else (), assignees=(args.assignee,) if args.assignee else ())
    for claim in queue.find(where, limit=args.limit):
        if args.json:
            print(json.dumps(_claim_json(claim), ensure_ascii=False))
        else:
            verdict = f" · {claim.reviewed_verdict.own}" if claim.reviewed_verdict else ""
            who = f" · {claim.assignee}" if claim.assignee else ""
            print(f"{claim.id}  {claim.status:<10}{verdict}{who}  {claim.text[:90]}")
    return 0


def _claim_json(claim: Any) -> dict[str, Any]:
    return {
        "id": claim.id,
        "text": claim.text,
        "status": claim.status,
        "assignee": claim.assignee,
        "due_on": claim.due_on,
        "tags": list(claim.tags),
        "claimant": claim.appearance.claimant,
        "language": claim.language,
        "repeats": claim.repeats,
        "appearance": claim.appearance.url,
        "appeared_on": claim.appearance.on,
        "reviewed_verdict": claim.reviewed_verdict,
        "review_reason": claim.review_reason,
        "reviewed_by": claim.reviewed_by,
        "published_by": claim.published_by,
        "created_by": claim.created_by,
    }


def _show(args: argparse.Namespace) -> int:
    queue, _, _ = _open()
    claim = queue.get(args.id)
    if claim is None:
        raise DebateDeskError(f"no claim {args.id!r} in the queue; `python -m pipelines queue list` lists them")
    runs, history = queue.runs_of(claim.id), queue.history(claim.id)
    if args.json:
        print(json.dumps({**_claim_json(claim), "runs": runs, "history": [h.describe() for h in history]}, ensure_ascii=False))
        return 0
    for key, value in _claim_json(claim).items():
        if value not in ("", None, []):
            print(f"{key:>16}: {value}")
    print(f"{'runs':>16}: {', '.join(runs) or '(none)'}")
    for change in history:
        print(f"{'':>16}  {change.describe()}")
    return 0


def _assign(args: argparse.Namespace) -> int:
    user = _user(args.by)
    queue, _, _ = _open()
    claim = queue.update(args.id, user, assignee=args.assignee)
    print(f"{claim.id} is {'with ' + claim.assignee if claim.assignee else 'with nobody'}")
    return 0


def _read(path: Path) -> bytes:
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise DebateDeskError(f"{path}: {size / 1e6:.1f} MB is over the {MAX_FILE_BYTES // 1_000_000} MB a file may be here")
    return path.read_bytes()


def _import(args: argparse.Namespace) -> int:
    from pipelines.newsroom.intake import claims_from_file

    user = _user(args.by)
    claims = claims_from_file(_read(args.file), args.file.name)
    queue, _, _ = _open()
    added = queue.add_many(claims, user)
    print(f"added {len(added)} claims from {args.file.name}")
    for claim in added:
        print(f"  {claim.id}  {claim.text[:100]}")
    return 0


def _import_reviews(args: argparse.Namespace) -> int:
    from pipelines.newsroom.reviews_in import read_reviews

    user = _user(args.by)
    reviews = read_reviews(_read(args.file), args.file.name)
    _, outside, _ = _open()
    added, already = outside.add(reviews, by=user.name, source_file=args.file.name)
    organisations = sorted({r.organisation for r in reviews})
    print(
        f"read {len(reviews)} reviews from {args.file.name} ({', '.join(organisations)[:200]}): {added} added, {already} already here; "
        "kept as their organisations' reviews, never as this desk's verdicts"
    )
    return 0


def _seen(args: argparse.Namespace) -> int:
    from pipelines.run.runner import validate_claim

    validate_claim(args.text)
    queue, outside, settings = _open()
    matches = _matches(args.text, queue, outside, settings)
    if args.json:
        print(json.dumps({"matches": [_match_json(m) for m in matches]}, ensure_ascii=False))
    else:
        _print_matches(matches)
    return 0
