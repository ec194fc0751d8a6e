"""``python -m pipelines queue``: add (with "seen before?"), list, show, assign, import claims and other organisations'
ClaimReviews; bad files answered plainly with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.cli.main import main
from tests.fakes import TEXANS_REVIEW

FEED = {"@type": "DataFeed", "dataFeedElement": [{"@type": "DataFeedItem", "item": [TEXANS_REVIEW]}]}  # Google's feed shape


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["queue", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_claim_added_from_the_command_line_is_told_what_it_may_repeat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    feed = tmp_path / "feed.json"
    feed.write_text(json.dumps(FEED))
    code, out, _ = run(capsys, "import-reviews", str(feed), "--by", "Ana")
    assert code == 0 and "1 added, 0 already here" in out and "never as this desk's verdicts" in out
    code, out, _ = run(
        capsys, "add", "Since September 11 only around 250 soldiers from Texas died in combat.", "--claimant", "A Senator", "--json"
    )
    assert code == 0
    added = json.loads(out)
    (match,) = added["matches"]
    assert match["source"] == "Example Checks" and match["verdict"] == "Mostly false" and match["date"] == "2026-11-30"
    assert match["level"] in ("suggest", "join") and match["link"] == "https://factcheck.example.org/texans" and not match["own"]

    code, out, _ = run(capsys, "assign", added["id"], "Bo Lind", "--by", "Ana")
    assert code == 0 and "with Bo Lind" in out
    code, out, _ = run(capsys, "list", "--json")
    (listed,) = [json.loads(line) for line in out.splitlines()]
    assert listed["id"] == added["id"] and listed["assignee"] == "Bo Lind" and listed["claimant"] == "A Senator"
    code, out, _ = run(capsys, "show", added["id"])
    assert code == 0 and "assignee: — → Bo Lind" in out and "claimant: A Senator" in out
    code, out, _ = run(capsys, "seen", "The Apollo Moon landing was staged in a film studio.")
    assert code == 0 and "nothing this desk or an imported review checked is close" in out


def test_claims_import_from_a_file_and_bad_files_are_answered_plainly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    claims = tmp_path / "claims.txt"
    claims.write_text("Tides follow the Moon\nThe Moon landing was filmed in a studio\n")
    code, out, _ = run(capsys, "import", str(claims), "--by", "Ana")
    assert code == 0 and "added 2 claims" in out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"@type": "ClaimReview", "claimReviewed": "x", "author": {"name": "Org"}}))
    code, _, err = run(capsys, "import-reviews", str(bad), "--by", "Ana")
    assert code == 2 and "bad.json: review 1: its reviewRating has no alternateName" in err and "Traceback" not in err
    code, _, err = run(capsys, "show", "nothere")
    assert code == 2 and "no claim 'nothere' in the queue" in err


def test_a_claim_that_repeats_an_earlier_check_word_for_word_is_joined_to_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    feed = tmp_path / "feed.json"
    feed.write_text(json.dumps(FEED))
    run(capsys, "import-reviews", str(feed))
    code, out, _ = run(capsys, "add", "Only about 250 Texans have been killed in action since 9/11.", "--json")
    added = json.loads(out)
    assert code == 0 and added["repeats"].startswith("review:") and added["matches"][0]["level"] == "join"
    assert added["language"] == "en", "told from the text"
    code, out, _ = run(capsys, "show", added["id"])
    assert "joined (repeats" in out
    code, _, err = run(capsys, "add", "Las mascarillas reducen la transmisión", "--language", "Spanish")
    assert code == 2 and "not a language code" in err
