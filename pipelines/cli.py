"""The CLI: verify a claim, ingest files, list corpora, prepare the embedded model.

python -m pipelines verify "CLAIM" --protocol single --backend fake --corpus demo [--json]
python -m pipelines ingest PATH [PATH ...] --corpus NAME
python -m pipelines corpora
python -m pipelines model prepare
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pipelines.config import AppSettings, RunConfig
from pipelines.errors import DebateDeskError
from pipelines.events import (
    ArgumentDelta,
    Event,
    EvidenceRetrieved,
    QueryIssued,
    RunFailed,
    StageFailed,
    StageStarted,
    TurnCompleted,
    VerdictReached,
    WebResultsFiltered,
    WebSearchUnavailable,
    dump_event,
)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except DebateDeskError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # bad names and files from the user, with their own messages
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipelines", description="DebateDesk: check claims with debating AI agents.")
    sub = parser.add_subparsers(dest="command", required=True)

    verify = sub.add_parser("verify", help="check one claim and print the events and the verdict")
    verify.add_argument("claim")
    verify.add_argument("--protocol", default=None, help="debate method (default from config)")
    verify.add_argument("--backend", default=None, help="fake, embedded or openai, for every role")
    verify.add_argument("--model", default="", help="model name at the backend")
    verify.add_argument("--corpus", default=None, help="local corpus to search")
    verify.add_argument("--no-web", action="store_true", help="do not search the web")
    verify.add_argument("--json", action="store_true", help="print one JSON line per event")
    verify.set_defaults(handler=_verify)

    ingest = sub.add_parser("ingest", help="add .txt, .md or .jsonl files (or folders of them) to a corpus")
    ingest.add_argument("paths", nargs="+", type=Path)
    ingest.add_argument("--corpus", required=True)
    ingest.set_defaults(handler=_ingest)

    corpora = sub.add_parser("corpora", help="list corpora with document and passage counts")
    corpora.set_defaults(handler=_corpora)

    options = sub.add_parser("options", help="print every run option as a Markdown table (the README's)")
    options.set_defaults(handler=_options)

    model = sub.add_parser("model", help="manage the embedded model")
    model.add_argument("action", choices=["prepare", "stop"])
    model.set_defaults(handler=_model)
    return parser


def _verify(args: argparse.Namespace) -> int:
    from pipelines.runner import Services, check_names, stream_run, validate_claim

    config = RunConfig()
    if args.protocol:
        config = config.model_copy(update={"protocol": args.protocol})
    if args.corpus:
        config = config.model_copy(update={"corpus": args.corpus})
    if args.backend:
        config = config.with_backend(args.backend, args.model)
    if args.no_web:
        config = config.model_copy(update={"retrieval": config.retrieval.model_copy(update={"web_search": False})})
    validate_claim(args.claim)  # cheap checks first: bad input answers in a blink, not after loading models
    check_names(config)
    services = Services.create()
    failed = False
    for evt in stream_run(args.claim, config, services):
        failed = failed or isinstance(evt, RunFailed)
        if args.json:
            print(json.dumps(dump_event(evt)), flush=True)
        else:
            _print_human(evt)
    return 1 if failed else 0


def _print_human(evt: Event) -> None:
    match evt:
        case StageStarted(stage=stage, detail=detail):
            print(f"… {stage}: {detail}", flush=True)
        case QueryIssued(agent=agent, query=query, tool=tool):
            print(f"  {agent} searches {tool}: {query}", flush=True)
        case EvidenceRetrieved(evidence=e):
            print(f"  [{e.id}] {e.source_label}: {e.text[:100]}", flush=True)
        case WebSearchUnavailable(reason=reason):
            print(f"  ! {reason}", flush=True)
        case WebResultsFiltered(filtered=filtered, kept=kept, policy=policy):
            print(f"  source policy ({policy}) refused {filtered} web result(s); {kept} kept", flush=True)
        case ArgumentDelta(text=text):
            print(text, end="", flush=True)
        case TurnCompleted():
            print(flush=True)
        case StageFailed(stage=stage, reason=reason):
            print(f"  ! {stage} failed: {reason}", flush=True)
        case VerdictReached(verdict=v):
            conf = f" (confidence {v.confidence:.2f})" if v.confidence is not None else ""
            print(f"\nVERDICT: {v.label}{conf} — decided by {v.decided_by}; {v.stop_reason}", flush=True)
        case RunFailed(reason=reason):
            print(f"\nRUN FAILED: {reason}", flush=True)
        case _:
            pass


def _ingest(args: argparse.Namespace) -> int:
    from corpora.chunking import chunk_documents
    from corpora.loaders import SUPPORTED_SUFFIXES, FileLoader
    from pipelines.runner import Services

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
    services = Services.create(with_store=False)
    report = services.index.ingest(args.corpus, chunk_documents(FileLoader(files).load_documents()))
    print(
        f"{report.corpus}: {report.documents} documents, {report.passages} passages ({report.added} new, {report.already_present} already present)"
    )
    return 0


def _corpora(args: argparse.Namespace) -> int:
    from pipelines.runner import Services

    services = Services.create(with_store=False)
    known = services.index.corpora()
    for name in services.corpus_names():
        if name in known:
            print(f"{name}\t{known[name]['documents']} documents\t{known[name]['passages']} passages")
        else:
            print(f"{name}\tbuilt in, indexed on first use")
    return 0


def _options(args: argparse.Namespace) -> int:
    print(options_table())
    return 0


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
    from pipelines.llm import embedded

    settings = AppSettings()
    if args.action == "prepare":
        path = embedded.prepare(settings)
        print(f"embedded model ready: {path}")
    else:
        embedded.stop_server(settings.model_cache)
        print("embedded model server stopped")
    return 0
