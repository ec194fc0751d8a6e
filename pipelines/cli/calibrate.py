"""``python -m pipelines calibrate``: calibrate desk for the model a desk brings, on labelled claims; list, roll back, refit on reviewed claims.

python -m pipelines calibrate --backend openai --model NAME --base-url http://127.0.0.1:8080/v1 --limit 120
python -m pipelines calibrate --dataset my-claims.jsonl --corpus my-notes --limit 80 --backend fake
python -m pipelines calibrate --dataset reviewed --refit [--choose better|refit|current] [--at-least 50]
python -m pipelines calibrate --list            # the kept calibrations of the judge's model, the one in use marked
python -m pipelines calibrate --rollback [VERSION|shipped]

Calling it again with the same choices goes on where the last call stopped: every claim's
reading is a stored run, and a claim read before is not read again.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pipelines.cli.acting import BY_HELP, acting_person

if TYPE_CHECKING:
    from pipelines.core.config import AppSettings, RunConfig


def add_calibrate_command(sub: Any) -> None:
    parser = sub.add_parser(
        "calibrate",
        help="calibrate desk's confidence for the judge's model on labelled claims (resumable); --list, --rollback, --refit",
    )
    parser.add_argument("--backend", default=None, help="fake, embedded or openai, for every role (default from config)")
    parser.add_argument("--model", default="", help="model name at the backend (what the calibration is kept under)")
    parser.add_argument("--base-url", default="", help="the endpoint's address, e.g. http://127.0.0.1:8080/v1 (openai backend)")
    parser.add_argument(
        "--dataset",
        default="check-covid",
        help="check-covid (default), a labelled .jsonl file, or 'reviewed': the desk's claims an editor ruled",
    )
    parser.add_argument("--split", default="train", help="Check-COVID split (default train: keep dev for scoring)")
    parser.add_argument("--limit", type=int, default=120, help="claims to read, a label-balanced sample (default 120)")
    parser.add_argument("--seed", type=int, default=0, help="which sample --limit takes (default 0)")
    parser.add_argument("--corpus", default=None, help="corpus desk searches (default: the dataset's, else from config)")
    parser.add_argument(
        "--max-calls", type=int, default=0, help="most model calls the whole calibration may make (0: the configured limit)"
    )
    parser.add_argument("--yes", action="store_true", help="do not ask before reading (the cost is still printed)")
    parser.add_argument("--dry-run", action="store_true", help="probe the endpoint and print the plan and its cost, read nothing")
    parser.add_argument("--no-save", action="store_true", help="fit and print the scores, keep nothing")
    parser.add_argument("--list", action="store_true", help="list the kept calibrations of the judge's model")
    parser.add_argument(
        "--rollback", nargs="?", const="", default=None, metavar="VERSION", help="put an earlier calibration in use (editor)"
    )
    parser.add_argument("--refit", action="store_true", help="with --dataset reviewed: refit and keep the better of it and the one in use")
    parser.add_argument("--choose", choices=("better", "refit", "current"), default="better", help="with --refit: which to keep")
    parser.add_argument("--at-least", type=int, default=0, help="with --refit: reviewed claims needed (default 50)")
    parser.add_argument("--by", default="", help=BY_HELP)
    parser.set_defaults(handler=run_calibrate_command)


def run_calibrate_command(args: argparse.Namespace) -> int:
    from pipelines.core.config import AppSettings
    from pipelines.eval import calibrate as cal
    from pipelines.run.services import Services

    settings = AppSettings()
    config = _run_config(args)
    model = cal.judge_model_name(config)
    reader = cal.exhibit_settings(config).reader

    if args.list:
        services = Services.create(settings, with_store=False)
        return _list(services, model, reader)
    user = _cli_user(args.by)  # rolling back and calibrating are an editor's on a shared desk; listing is anyone's
    if args.rollback is not None:
        services = Services.create(settings, with_store=False)
        now = cal.roll_back(services, model, reader, user=user, to=args.rollback)
        print(f"{model}: desk now uses the {'shipped calibration (or none)' if now == 'shipped' else f'calibration {now}'}")
        return 0

    services = Services.create(settings)
    planned = _plan(args, settings, config, services, model)
    if args.dry_run:
        return 0
    if not args.yes and sys.stdin.isatty() and input("go on? [y/N] ").strip().lower() not in ("y", "yes"):
        print("nothing was read")
        return 1

    def progress(p: cal.Progress) -> None:
        print(f"  [{p.done}/{p.total}] {p.last} · {p.eta()}", file=sys.stderr, flush=True)

    if args.refit:
        return _refit(args, planned, services, user, progress)
    return _calibrate(args, planned, services, user, progress)


def _run_config(args: argparse.Namespace) -> RunConfig:
    """The configured run settings with the command's backend, model, endpoint and call limit."""
    from pipelines.core.config import RunConfig

    config = RunConfig()
    if args.backend:
        config = config.with_backend(args.backend, args.model)
    elif args.model:
        config = config.with_backend(config.judge.backend, args.model)
    if args.base_url:
        config = config.model_copy(
            update={role: config.role(role).model_copy(update={"base_url": args.base_url}) for role in ("debater", "judge", "scorer")}
        )
    if args.max_calls:
        config = config.model_copy(update={"budget": config.budget.model_copy(update={"batch_max_calls": args.max_calls})})
    return config


def _plan(args: argparse.Namespace, settings: AppSettings, config: RunConfig, services: Any, model: str) -> Any:
    """The labelled claims to read and the plan for them (the endpoint probed with one short call), printed with its cost."""
    from pipelines.eval import calibrate as cal

    labelled = cal.labelled_set(
        args.dataset, limit=args.limit, settings_checkcovid=settings.checkcovid_dir, store=services.store, split=args.split, seed=args.seed
    )
    if args.corpus:
        labelled = cal.LabelledSet(labelled.name, labelled.claims, labelled.three_labels, corpus=args.corpus)
    print(f"probing {model} with one short call...", file=sys.stderr, flush=True)
    planned = cal.plan(config, labelled, services)
    print(
        f"calibrating desk ({cal.exhibit_settings(planned.config).reader} question, {cal.exhibit_settings(planned.config).exhibits} exhibits) for {model} on {labelled.name}"
    )
    print(f"  {planned.cost}")
    print(f"  kept under {planned.key} in {settings.data_dir / 'calibrations'}")
    return planned


def _refit(args: argparse.Namespace, planned: Any, services: Any, user: Any, progress: Callable[[Any], None]) -> int:
    """--refit: the calibration in use and one refitted on the reviewed claims, scored side by side; which is kept."""
    from pipelines.eval import calibrate as cal

    comparison, version, in_use = cal.refit_on_reviewed(
        planned, services, user=user, choose=args.choose, at_least=args.at_least or cal.DEFAULT_REFIT_AT, on_progress=progress
    )
    print(f"on the {comparison.claims} reviewed claims (log loss / ECE / accuracy / selective accuracy on the surer half / AUC):")
    print(f"  in use  {comparison.current_name:<40} {_scores(comparison.current)}")
    print(f"  refit   {'(5-fold cross-validated)':<40} {_scores(comparison.refit)}")
    if comparison.refitted.refused:
        print(f"  {comparison.refitted.refused}")
    print(f"kept: {version.calibration.name if version else 'the calibration in use'}; desk now uses {in_use}")
    return 0


def _calibrate(args: argparse.Namespace, planned: Any, services: Any, user: Any, progress: Callable[[Any], None]) -> int:
    """The claims read (or taken from earlier calls), the fit, its cross-validated scores, and the calibration kept."""
    from pipelines.eval import calibrate as cal

    outcome = cal.calibrate(planned, services, user=user, save=not args.no_save, on_progress=progress)
    read = outcome.readings
    print(f"{len(read)} claims read ({sum(r.how == 'stored' for r in read)} read by an earlier call), {outcome.failed} failed")
    if outcome.stopped:
        print(f"stopped: {outcome.stopped}")
        return 1
    fitted = outcome.fitted
    assert fitted is not None
    print("cross-validated on the claims read (5 folds, binary):")
    print(f"  {_scores(fitted.fit.cross_validated)}")
    if fitted.calibration is not None:
        weights = ", ".join(f"{n} {w:+.2f}" for n, w in fitted.calibration.weights.items())
        print(
            f"  p(supported) = sigmoid({fitted.calibration.bias:+.2f} + {weights}); NOT ENOUGH INFO below {fitted.calibration.decide_at:.2f} ({fitted.decide_at_from})"
        )
    if fitted.refused:
        print(fitted.refused)
        return 3
    if outcome.saved is not None:
        print(f"saved {outcome.saved.calibration.name}: desk uses it from the next run on (roll back with --rollback)")
    return 0


def _scores(s: dict[str, float]) -> str:
    return (
        f"log loss {s['log_loss']:.3f} · ECE {s['ece']:.3f} · accuracy {s['accuracy']:.3f} · "
        f"selective accuracy @50% {s['selective_50']:.3f} · AUC {s['auc']:.3f}"
    )


def _list(services: Any, model: str, reader: str) -> int:
    from pipelines.calibration.files import load_shipped
    from pipelines.eval.calibrate import iter_versions

    found = list(iter_versions(services, model, reader))
    shipped = load_shipped(model, reader)
    in_use = any(used for _, used in found)
    for version, used in found:
        cv = version.calibration.settings.get("cross_validated", {})
        figures = f"log loss {cv['log_loss']:.3f}, ECE {cv['ece']:.3f}, AUC {cv.get('auc', float('nan')):.3f}" if cv else ""
        print(f"{'*' if used else ' '} {version.stem}  {version.calibration.fitted_on}  {figures}")
    print(f"{'*' if not in_use and shipped else ' '} shipped  {shipped.fitted_on if shipped else '(none shipped for ' + model + ')'}")
    return 0


def _cli_user(by: str) -> Any:
    """Who calibrates: on a desk with a users file, the account ``--by`` names, proven by its password and allowed to
    calibrate (``pipelines.cli.acting``, as every command asks, with the sign-in's slowing-down); else the person here."""
    from pipelines.newsroom.access.users import User

    person = acting_person(by, "calibrate")
    if isinstance(person, str) or person.account is None:
        return None
    return User(username=person.account, name=person.name, role=person.role or "checker")
