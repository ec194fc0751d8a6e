"""The CLI: verify a claim, ingest files, list corpora, prepare the embedded model.

python -m pipelines verify "CLAIM" --protocol single --backend fake --corpus demo [--json]
python -m pipelines ingest PATH [PATH ...] --corpus NAME
python -m pipelines corpora
python -m pipelines model prepare
python -m pipelines runs [--claim TEXT] [--status S] [--protocol P] [--verdict V]
python -m pipelines export RUN_ID --format json|md|csv|claimreview [-o FILE]
python -m pipelines import FILE --by NAME
python -m pipelines verify-record FILE [--expect FINGERPRINT] [--trusted-keys FILE]   (exit 0 only when intact and trusted)
python -m pipelines resume RUN_ID [--json] [--by NAME]
python -m pipelines override RUN_ID --verdict LABEL --by NAME --reason TEXT

With a users file (DEBATEDESK_USERS_FILE), verify, batch, import, resume and override act as the account named by --by, and only
with its password: asked for at the terminal, or read from DEBATEDESK_PASSWORD (for scripts).
python -m pipelines eval --dataset check-covid --split dev --protocol single --backend fake --limit 10
python -m pipelines batch claims.csv --protocol single --concurrency 2 [--submit]
python -m pipelines worker [--concurrency 2]   (a shared desk on PostgreSQL: docs/scale.md)
python -m pipelines calibrate --backend openai --model NAME --base-url URL --limit 120 [--rollback] [--dataset reviewed --refit]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from pipelines.cli.acting import BY_HELP, acting_person
from pipelines.core.config import AppSettings, RunConfig, describe_invalid, load_run_config

if TYPE_CHECKING:
    from pipelines.record.store import RunStore
    from pipelines.run.services import Services
from pipelines.core.errors import DebateDeskError
from pipelines.core.events import (
    AgreementChecked,
    ArgumentDelta,
    BeliefRead,
    ClaimDecomposed,
    Event,
    EvidenceRetrieved,
    EvidenceSelected,
    ExhibitStanceRead,
    LabelProbabilitiesEstimated,
    MemoryRecalled,
    ModelServerRestarted,
    OmittedContextFound,
    QueryIssued,
    ReasoningStepTaken,
    RoundStarted,
    RunFailed,
    RunStarted,
    ScoreComputed,
    StageFailed,
    StageStarted,
    StopRuleChecked,
    TurnCompleted,
    VerdictAggregated,
    VerdictReached,
    WebResultsFiltered,
    WebSearchUnavailable,
    dump_event,
)
from pipelines.core.text.probability import belief_line, decimal
from pipelines.core.text.safety import TerminalSafeStream
from pipelines.core.text.times import when
from pipelines.record.digest import RunDigest


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    # Claims, model answers, web pages and error messages are printed: their escape sequences are shown, never obeyed.
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = TerminalSafeStream(out), TerminalSafeStream(err)  # type: ignore[assignment]
    try:
        return int(args.handler(args))
    except DebateDeskError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ValidationError as exc:  # a DEBATEDESK_* value out of range: which variable, and what it may be
        print(f"error: a setting is not valid: {describe_invalid(exc, RunConfig, env=True)}", file=sys.stderr)
        return 2
    except ValueError as exc:  # bad names and files from the user, with their own messages
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a full disk or a read-only folder met outside the run store: what and where, no traceback
        print(f"error: {exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}", file=sys.stderr)
        return 2
    finally:
        sys.stdout, sys.stderr = out, err


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipelines", description="DebateDesk: check claims with debating AI agents.")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_claim_commands(sub)
    _add_record_commands(sub)

    model = sub.add_parser("model", help="manage the embedded model")
    model.add_argument("action", choices=["prepare", "stop"])
    model.set_defaults(handler=_model)

    from pipelines.cli.batch import add_batch_command
    from pipelines.cli.calibrate import add_calibrate_command
    from pipelines.cli.eval import add_eval_command
    from pipelines.cli.queue import add_queue_command
    from pipelines.cli.worker import add_worker_command

    add_eval_command(sub)
    add_batch_command(sub)
    add_calibrate_command(sub)
    add_queue_command(sub)
    add_worker_command(sub)
    return parser


def _add_claim_commands(sub: Any) -> None:
    """Checking a claim and what it is checked against: verify, ingest, corpora, options."""
    verify = sub.add_parser("verify", help="check one claim and print the events and the verdict")
    verify.add_argument("claim")
    verify.add_argument("--protocol", default=None, help="debate method (default from config)")
    verify.add_argument("--backend", default=None, help="fake, embedded or openai, for every role")
    verify.add_argument("--model", default="", help="model name at the backend")
    verify.add_argument("--corpus", default=None, help="local corpus to search")
    verify.add_argument("--no-web", action="store_true", help="do not search the web")
    verify.add_argument("--json", action="store_true", help="print one JSON line per event")
    verify.add_argument("--by", default="", help=BY_HELP)
    verify.set_defaults(handler=_verify)

    ingest = sub.add_parser("ingest", help="add .txt, .md or .jsonl files (or folders of them) to a corpus")
    ingest.add_argument("paths", nargs="+", type=Path)
    ingest.add_argument("--corpus", required=True)
    ingest.set_defaults(handler=_ingest)

    corpora = sub.add_parser("corpora", help="list corpora with document and passage counts")
    corpora.set_defaults(handler=_corpora)

    options = sub.add_parser("options", help="print every run option as a Markdown table (docs/options.md's)")
    options.add_argument(
        "--write", type=Path, metavar="PAGE", help="refresh the table between the options markers of PAGE instead of printing it"
    )
    options.set_defaults(handler=_options)


def _add_record_commands(sub: Any) -> None:
    """What runs leave behind: list, export, import, verify a record, resume a run, override its verdict, the record's schema."""
    runs = sub.add_parser("runs", help="list stored runs, newest first (runs left running by a dead process show as interrupted)")
    runs.add_argument("--claim", default="", help="only runs whose claim contains this text")
    runs.add_argument("--status", action="append", default=[], help="running, completed, failed or interrupted (repeatable)")
    runs.add_argument("--protocol", action="append", default=[], help="repeatable")
    runs.add_argument(
        "--verdict",
        action="append",
        default=[],
        help="final verdict: SUPPORTED, REFUTED or NOT ENOUGH INFO (a protocol's own word works too; repeatable)",
    )
    runs.add_argument("--limit", type=int, default=50)
    runs.set_defaults(handler=_runs)

    export = sub.add_parser("export", help="write a stored run as JSON (the whole record), a Markdown report or ClaimReview JSON-LD")
    export.add_argument("run_id")
    export.add_argument("--format", choices=["json", "md", "csv", "claimreview"], default="json")
    export.add_argument("-o", "--output", type=Path, default=None, help="file to write (default: print)")
    export.set_defaults(handler=_export)

    imp = sub.add_parser("import", help="check a JSON run record (signature and chain), validate it and store it for audit")
    imp.add_argument("file", type=Path)
    imp.add_argument("--by", required=True, help="who imports it (name or initials): the record keeps who brought it in; " + BY_HELP)
    imp.set_defaults(handler=_import)

    check = sub.add_parser(
        "verify-record", help="say whether an exported JSON record is intact, whose key signed it and where it was altered"
    )
    check.add_argument("file", type=Path)
    check.add_argument(
        "--expect", default="", metavar="FINGERPRINT", help="the fingerprint of the one key it must be signed with (instead of this desk's)"
    )
    check.add_argument(
        "--trusted-keys",
        type=Path,
        default=None,
        metavar="FILE",
        help="a file of keys you trust besides this desk's: one fingerprint (SHA256:...) or base64 public key a line, then a name",
    )
    check.set_defaults(handler=_verify_record)

    resume = sub.add_parser("resume", help="go on with a failed or interrupted run from its last completed step")
    resume.add_argument("run_id")
    resume.add_argument("--json", action="store_true", help="print one JSON line per new event")
    resume.add_argument("--by", default="", help="who resumes it; " + BY_HELP)
    resume.set_defaults(handler=_resume)

    override = sub.add_parser("override", help="record the checker's verdict beside the model's")
    override.add_argument("run_id")
    override.add_argument("--verdict", required=True)
    override.add_argument("--by", required=True, help="who decides (name or initials), for the audit trail; " + BY_HELP)
    override.add_argument(
        "--reason", "--note", dest="reason", required=True, help="why (required): what you found and where, kept in the audit trail"
    )
    override.set_defaults(handler=_override)

    schema = sub.add_parser("schema", help="print the JSON Schema of exported run records")
    schema.set_defaults(handler=_schema)


def _verify(args: argparse.Namespace) -> int:
    from pipelines.run.runner import check_names, stream_run, validate_claim

    overrides = {"protocol": args.protocol, "corpus": args.corpus, "backend": args.backend, "model": args.model, "no_web": args.no_web}
    validate_claim(args.claim)  # cheap checks first: bad input answers in a blink, not after loading models
    check_names(load_run_config().with_overrides(**overrides))
    by = acting_person(args.by, "run")
    services = _services()
    config = services.desk_settings().apply(load_run_config()).with_overrides(**overrides)  # the desk's endpoints, prices and limits
    started: list[str] = []

    def noted(events: Iterable[Event]) -> Iterator[Event]:
        for evt in events:
            if isinstance(evt, RunStarted) and not started:
                started.append(evt.run_id)
            yield evt

    code = _print_events(noted(stream_run(args.claim, config, services, by=by)), as_json=args.json)
    if started and services.store is not None:  # the run joins its queued claim, as a run on Verify does
        from pipelines.cli.queue import join_queue

        print(join_queue(services.store.engine, started[0], args.claim, by), file=sys.stderr)
    return code


def _services() -> Services:
    """The services a run uses; spill files refused or set aside at start are said on stderr, and the command goes on."""
    from pipelines.run.services import Services

    services = Services.create()
    for problem in services.spill_problems:
        print(f"warning: {problem}", file=sys.stderr)
    return services


def _store() -> RunStore:
    from pipelines.record.spill import replay_spills
    from pipelines.record.store import RunStore

    settings = AppSettings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    store = RunStore(settings.sqlite_url)
    # A run's events kept on disk while the store was away go in first; a spill file refused or set aside is said, and the command goes on.
    for problem in replay_spills(store, settings.data_dir).problems:
        print(f"warning: {problem}", file=sys.stderr)
    return store


def _runs(args: argparse.Namespace) -> int:
    from pipelines.record.labels import common_label
    from pipelines.record.store import RunFilter

    store = _store()
    store.reconcile()
    where = RunFilter(claim=args.claim, statuses=tuple(args.status), protocols=tuple(args.protocol), verdicts=tuple(args.verdict))
    for run in store.list_runs(limit=args.limit, where=where):
        started = when(run.created_at)
        verdict = common_label(run.final_verdict) if run.final_verdict else "-"
        if run.checker_verdict:
            verdict += f" (checker; model: {run.verdict or '-'})"
        elif run.verdict and verdict != run.verdict:
            verdict += f" (the protocol's word: {run.verdict})"
        print(f"{run.id}\t{started}\t{run.status}\t{run.protocol}\t{verdict}\t{run.claim[:80]}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from pipelines.record.export import export_run
    from pipelines.record.signing import desk_key

    store = _store()
    summary = store.get_run(args.run_id)
    if summary is None:
        raise ValueError(f"no run {args.run_id!r}; list runs with `python -m pipelines runs`")
    if args.format == "claimreview":  # the same rule as History's button: a fact-check is what a person of this desk reviewed
        from pipelines.record.export import claimreview_refusal

        if (why := claimreview_refusal(summary)) is not None:
            raise DebateDeskError(f"no ClaimReview for run {args.run_id}: {why}")
    settings = AppSettings()
    signer = desk_key(settings.data_dir) if args.format == "json" else None
    stored_chain = store.stored_chain(args.run_id).describe() if args.format == "json" else ""
    text = export_run(
        summary, store.events(args.run_id), args.format, public_url=settings.public_url, signer=signer, stored_chain=stored_chain
    )
    if args.output:
        args.output.write_text(text)
        print(f"wrote {args.output} ({len(text):,} characters)")
    else:
        sys.stdout.write(text)
    return 0


def _import(args: argparse.Namespace) -> int:
    from pipelines.record.importer import import_run
    from pipelines.record.signing import existing_desk_key

    if not args.file.is_file():
        raise ValueError(f"{args.file}: no such file")
    by = acting_person(args.by, "import")
    name = by if isinstance(by, str) else by.name
    done = import_run(_store(), args.file.read_bytes(), source=args.file.name, by=name, desk=existing_desk_key(AppSettings().data_dir))
    summary = done.summary
    print(f"the record is {done.check.summary()}")
    print(
        f"{'imported' if done.new else 'already stored'}: {summary.id} ({summary.status}, {summary.event_count} events) {summary.claim[:80]}"
    )
    return 0


def _verify_record(args: argparse.Namespace) -> int:
    """Exit 0 only for an intact record signed with a trusted key (this desk's, --expect's, or --trusted-keys'); see ``Outcome``."""
    from pipelines.record.signing import existing_desk_key
    from pipelines.record.verification import Outcome, judge, read_record_file, read_trusted_keys, verify_record

    if not args.file.is_file():
        raise ValueError(f"{args.file}: no such file")
    settings = AppSettings()
    trusted = read_trusted_keys(args.trusted_keys) if args.trusted_keys else {}
    expected = " ".join(args.expect.split())
    data = read_record_file(args.file, int(settings.max_record_mb * 1_000_000))
    if data is None:
        size = args.file.stat().st_size / 1e6
        print(
            f"not checked: {args.file} is {size:,.1f} MB; the limit is {settings.max_record_mb:g} MB "
            "(DEBATEDESK_MAX_RECORD_MB). A run's record is well under it: is this the right file?"
        )
        return int(Outcome.UNREADABLE)
    desk = existing_desk_key(settings.data_dir)
    check = verify_record(data, desk_public_raw=desk.public_raw if desk is not None else None)
    for line in check.lines():
        print(line)
    outcome, reason = judge(check, trusted, expect=expected)  # with --expect, that key only: this desk's own is not enough
    print(reason)
    return int(outcome)


def _resume(args: argparse.Namespace) -> int:
    from pipelines.run.runner import resume_run

    by = acting_person(args.by, "run")
    services = _services()
    handle = resume_run(args.run_id, services, secrets_from=load_run_config(), by=by)  # the limits stored with the run hold
    return _print_events(handle.stream(start=handle.resumed_at), as_json=args.json)


def _override(args: argparse.Namespace) -> int:
    from pipelines.run.step_gate import override_verdict

    evt = override_verdict(_store(), args.run_id, args.verdict, args.reason, acting_person(args.by, "override"))
    was = evt.model_verdict.label if evt.model_verdict else "none"
    print(f"{args.run_id}: verdict set to {evt.label} by {evt.by} (the model's was {was})")
    return 0


def _schema(args: argparse.Namespace) -> int:
    from pipelines.record.record_file import record_schema

    print(json.dumps(record_schema(), indent=2))
    return 0


class _TurnPrinter:
    """Streams one turn at a time: turns argued side by side would otherwise interleave word by word."""

    def __init__(self) -> None:
        self.streaming: str | None = None

    def print(self, evt: Event) -> None:
        match evt:
            case ArgumentDelta(turn_id=turn_id, agent=agent, round=number, text=text):
                if self.streaming is None:
                    self.streaming = turn_id
                    print(f"[{agent}, round {number}]", flush=True)
                if turn_id == self.streaming:
                    print(text, end="", flush=True)
            case TurnCompleted(turn=turn):
                if turn.id == self.streaming:
                    print(flush=True)
                    self.streaming = None
                else:  # argued while another turn was streaming: shown whole, now
                    print(f"[{turn.agent}, round {turn.round}]\n{turn.text}", flush=True)
            case _:
                _print_human(evt)


def _print_human(evt: Event) -> None:
    match evt:
        case RoundStarted():
            print(f"\n── {evt.heading.lower()}", flush=True)
        case ScoreComputed(target=target, metric=metric, value=value, threshold=threshold):
            verdict = "" if threshold is None else f" ({'meets' if value >= threshold else 'below'} {threshold:.2f})"
            print(f"  {target} {metric} = {value:.2f}{verdict}", flush=True)
        case StageStarted(stage=stage, detail=detail):
            print(f"… {stage}: {detail}", flush=True)
        case QueryIssued(agent=agent, query=query, tool=tool):
            print(f"  {agent} searches {tool}: {query}", flush=True)
        case EvidenceRetrieved(evidence=e):
            print(f"  [{e.id}] {e.source_label}: {e.text[:100]}", flush=True)
        case WebSearchUnavailable(reason=reason, fallback=fallback):
            print(f"  ! {reason}" + (f"; {fallback} instead" if fallback else ""), flush=True)
        case WebResultsFiltered(filtered=filtered, kept=kept, policy=policy):
            print(f"  source policy ({policy}) refused {filtered} web result(s); {kept} kept", flush=True)
        case ModelServerRestarted(role=role, reason=reason, seconds=seconds):
            print(
                f"  ! the model server stopped mid-run ({reason[:160]}); started again in {seconds:.0f} s, the {role}'s call asked again",
                flush=True,
            )
        case StageFailed(stage=stage, reason=reason):
            print(f"  ! {stage} failed: {reason}", flush=True)
        case BeliefRead(over=over, probabilities=probabilities):
            print(f"  belief {over}: {belief_line(probabilities)}", flush=True)
        case VerdictReached(verdict=v):
            conf = f" (confidence {decimal(v.confidence)})" if v.confidence is not None else ""
            print(f"\nVERDICT: {v.label}{conf} — decided by {v.decided_by}; {v.stop_reason}", flush=True)
        case RunFailed(reason=reason):
            print(f"\nRUN FAILED: {reason}", flush=True)
        case LabelProbabilitiesEstimated(agent=agent, probabilities=probabilities, method=method, note=note):
            shares = ", ".join(f"{k} {v:.2f}" for k, v in probabilities.items())
            print(f"  {agent} ({method}): {shares}" + (f"  [{note}]" if note else ""), flush=True)
        case StopRuleChecked(phase=phase, stop_margin=s, verdict_confidence=c, tau_s=tau_s, tau_v=tau_v, stop=stop):
            print(
                f"  stop rule after the {phase}: s={s:+.2f} (τs {tau_s:+.2f}), c={c:.2f} (τv {tau_v:.2f}) → {'stop' if stop else 'continue'}",
                flush=True,
            )
        case OmittedContextFound(point=point):
            print(f"  omitted context: {point}", flush=True)
        case EvidenceSelected(agent=agent, round=number, evidence_ids=ids, none_found=none_found):
            print(f"  {agent} picks (round {number}): {'none found' if none_found else ', '.join(ids)}", flush=True)
        case AgreementChecked(round=number, agree=agree, consistent=consistent):
            print(f"  judge after round {number}: agree={agree}, consistent={consistent}", flush=True)
        case ClaimDecomposed(topic=topic, triplets=triplets, source=source):
            print(f"  topic: {topic}; triplets ({source}): " + "; ".join(str(t) for t in triplets), flush=True)
        case ReasoningStepTaken(step=step, action=action, query=query, reason=reason, forced=forced):
            print(
                f"  step {step}: {action}"
                + (f" {query!r}" if query else "")
                + (" (forced)" if forced else "")
                + (f" — {reason}" if reason else ""),
                flush=True,
            )
        case MemoryRecalled(evidence=e, match=match):
            print(f"  recalled [{e.id}] ({match}): {e.text[:100]}", flush=True)
        case ExhibitStanceRead(evidence_id=eid, round=number, probabilities=p, orders_agree=agree, method=method):
            again = " (read again after the debate)" if number > 1 else ""
            print(
                f"  [{eid}] supports {p.get('SUPPORTS', 0):.2f} · contradicts {p.get('REFUTES', 0):.2f} · "
                f"does not address {p.get('UNRELATED', 0):.2f}; orders {'agree' if agree else 'disagree'} ({method}){again}",
                flush=True,
            )
        case VerdictAggregated(probabilities=p, calibration=calibration, reason=reason):
            shares = ", ".join(f"{k} {decimal(v)}" for k, v in p.items())
            print(f"  verdict from the exhibits ({calibration}): {shares}\n  {reason}", flush=True)
        case _:
            pass


@contextmanager
def _progress_bar(unit: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr for a long job reporting (done, total); none when stderr is not a terminal."""
    from tqdm import tqdm

    bar: tqdm[Any] | None = None

    def update(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, unit=f" {unit}", file=sys.stderr, disable=None, dynamic_ncols=True)
        bar.update(done - bar.n)

    try:
        yield update
    finally:
        if bar is not None:
            bar.close()


def _ingest(args: argparse.Namespace) -> int:
    # The corpus index alone, not Services: an ingestion needs no chat models, run store or caches, and
    # importing them (LangChain, OpenAI's client, SQLAlchemy) took about a second of every ingestion.
    from corpora.chunking import chunk_documents
    from corpora.loaders import SUPPORTED_SUFFIXES, FileLoader
    from pipelines.run.tools.corpus_index import CorpusIndex
    from pipelines.run.tools.embeddings import default_embedder

    files: list[Path] = []
    for path in args.paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.suffix.lower() in SUPPORTED_SUFFIXES))
        elif path.is_file():
            files.append(path)
        else:
            raise ValueError(f"{path}: no such file or folder")
    if not files:
        raise ValueError(f"no {', '.join(SUPPORTED_SUFFIXES)} files found in {', '.join(map(str, args.paths))}")
    settings = AppSettings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    index = CorpusIndex(settings, default_embedder())
    passages = chunk_documents(FileLoader(files).load_documents())
    with _progress_bar("passages") as progress:
        report = index.ingest(args.corpus, passages, progress=progress)
    print(
        f"{report.corpus}: {report.documents} document{'s' if report.documents != 1 else ''}, "
        f"{report.passages} passage{'s' if report.passages != 1 else ''} ({report.added} new, {report.already_present} already present)"
    )
    return 0


def _corpora(args: argparse.Namespace) -> int:
    from pipelines.run.services import Services

    services = Services.create(with_store=False)
    known = services.index.corpora()
    for name in services.corpus_names():
        if name in known:
            print(f"{name}\t{known[name]['documents']} documents\t{known[name]['passages']} passages")
        else:
            print(f"{name}\tbuilt in, indexed on first use")
    return 0


def _print_events(events: Iterable[Event], *, as_json: bool) -> int:
    """Print a run's events as they come (JSON lines, or turns as text); 1 when the run failed."""
    run = RunDigest()
    printer = _TurnPrinter()
    for evt in events:
        run.feed(evt)
        if as_json:
            print(json.dumps(dump_event(evt)), flush=True)
        else:
            printer.print(evt)
    return 1 if run.failure is not None else 0


def _options(args: argparse.Namespace) -> int:
    if args.write is None:
        print(options_table())
        return 0
    args.write.write_text(with_options_table(args.write.read_text()))
    print(f"options table refreshed in {args.write}")
    return 0


OPTIONS_START, OPTIONS_END = "<!-- options:start -->", "<!-- options:end -->"


APP_START, APP_END = "<!-- app-settings:start -->", "<!-- app-settings:end -->"


def with_options_table(page: str) -> str:
    """``page`` with the text between its options markers replaced by the current table (and the app settings' table)."""
    start, end = page.index(OPTIONS_START) + len(OPTIONS_START), page.index(OPTIONS_END)
    page = page[:start] + "\n" + options_table() + "\n" + page[end:]
    if APP_START in page:
        start, end = page.index(APP_START) + len(APP_START), page.index(APP_END)
        page = page[:start] + "\n" + app_settings_table() + "\n" + page[end:]
    return page


def app_settings_table() -> str:
    """Every app-level setting (``AppSettings``: the data folder, the shared services, the fake backend's delay...)."""
    rows = ["| setting | env var | default | description |", "| --- | --- | --- | --- |"]
    home = str(Path.home())
    for name, field in AppSettings.model_fields.items():
        default = field.get_default(call_default_factory=True)
        shown = '""' if default == "" else repr(str(default) if isinstance(default, Path) else default).replace(home, "~")
        rows.append(f"| `{name}` | `DEBATEDESK_{name.upper()}` | `{shown}` | {field.description} |")
    return "\n".join(rows)


def options_table() -> str:
    """Every RunConfig option with its env var, default and description, as Markdown."""
    from pydantic import BaseModel

    rows = ["| option | env var | default | description |", "| --- | --- | --- | --- |"]

    def walk(model: type[BaseModel], instance: BaseModel, prefix: str) -> None:
        for name, field in model.model_fields.items():
            value = getattr(instance, name)
            path = f"{prefix}{name}"
            if isinstance(value, BaseModel):
                walk(type(value), value, path + ".")
                continue
            shown = "(secret)" if "key" in name else repr(value) if value != "" else '""'
            env = "DEBATEDESK_" + path.upper().replace(".", "__")
            rows.append(f"| `{path}` | `{env}` | `{shown}` | {field.description} |")

    walk(RunConfig, RunConfig.model_construct(), "")
    return "\n".join(rows)


def _model(args: argparse.Namespace) -> int:
    from pipelines.run.llm import embedded

    settings = AppSettings()
    if args.action == "prepare":
        path = embedded.prepare(settings)
        print(f"embedded model ready: {path}")
    else:
        embedded.stop_server(settings.model_cache)
        print("embedded model server stopped")
    return 0
