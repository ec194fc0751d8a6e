"""The peak-memory bench runs a batch and reports each claim and every peak (on the fake backend: no model, no server)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_a_batch_reports_each_claim_and_the_peaks(tmp_path: Path, demo_data_dir: Path) -> None:
    records = tmp_path / "memory.jsonl"
    command = [sys.executable, "bench/peak_memory.py", "--backend", "fake", "--corpus", "demo", "--claims", "2"]
    command += ["--protocol", "single", "--records", str(records), "--interval", "0.1"]
    env = {
        "DEBATEDESK_DATA_DIR": str(demo_data_dir),
        "DEBATEDESK_MODEL_CACHE": str(tmp_path),
        "HF_HUB_OFFLINE": "1",
        "PATH": "/usr/bin:/bin",
    }
    subprocess.run(command, cwd=ROOT, env=env, check=True, timeout=300)
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert [r["index"] for r in lines if r["phase"] == "claim"] == [1, 2]
    batch = lines[-1]
    assert batch["phase"] == "batch" and batch["claims"] == 2 and batch["protocol"] == "single"
    assert batch["app_peak_mib"] > 0 and batch["both_peak_mib"] >= batch["app_peak_mib"]
    assert batch["server_peak_mib"] == 0, "the fake backend starts no server"


def test_a_batch_cut_short_goes_on_after_the_claims_it_ran() -> None:
    from bench.peak_memory import claims
    from tests.conftest import find_check_covid

    if not (find_check_covid() / "corpus.json").is_file():
        pytest.skip("the Check-COVID folder is not beside the repo")
    first, rest = claims("check-covid", 3), claims("check-covid", 2, skip=1)
    assert len(first) == 3 and rest == first[1:3]
