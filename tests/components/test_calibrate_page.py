"""AppTest drives the Calibrate page on the fake backend: the probe's cost before anything runs, the calibration, roles."""

import json
import shutil
from pathlib import Path

import pytest

from tests.components.conftest import fake_app
from tests.components.test_sign_in import browser
from tests.fakes import users_file

FACTS = (
    "Laboratory studies consistently show that masks and respirators capture a share of the particles",
    "Lightning tends to strike the tallest and most conductive object in an area",
    "Antibiotics do not work against viruses because viruses lack the targets that antibiotics attack",
    "The Moon is on average about 384,400 kilometres from Earth",
    "Global mean sea level rose by about 20 centimetres between 1901 and 2018",
)


def claims_file() -> bytes:
    rows = []
    for i, fact in enumerate(FACTS):
        rows.append({"id": f"s{i}", "claim": fact, "label": "SUPPORTS"})
        rows.append({"id": f"r{i}", "claim": f"It is false that {fact[0].lower()}{fact[1:]}", "label": "REFUTES"})
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def plan(at, claims: int = 10):  # type: ignore[no-untyped-def]
    at.selectbox[1].select("upload")  # the form's labelled-claims box
    at.file_uploader[0].set_value(("claims.jsonl", claims_file(), "application/json"))
    at.selectbox[2].select("demo")
    at.number_input[0].set_value(claims)
    next(b for b in at.button if b.label == "Check the endpoint and the cost").click().run()
    assert not at.exception, at.exception
    return at


@pytest.fixture
def data_dir(demo_data_dir: Path, tmp_path: Path) -> Path:
    """A copy of the demo data folder: calibrations and runs written here stay in this test."""
    copy = tmp_path / "data"
    shutil.copytree(demo_data_dir, copy)
    return copy


def test_the_page_says_the_cost_first_then_calibrates_and_shows_what_it_found(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    at = fake_app(monkeypatch, data_dir, timeout=300)
    at.switch_page("pages/calibrate.py").run()
    at = plan(at)
    assert any("gives token probabilities" in i.value and "for 10 claims" in i.value for i in at.info)
    next(b for b in at.button if b.label == "Calibrate").click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert table["claims"].iloc[0] == 10 and 0 <= table["AUC"].iloc[0] <= 1
    assert len(at.get("plotly_chart")) == 2  # the reliability diagram and selective accuracy
    saved = any("Saved fake--contrast@" in s.value.replace("\\", "") for s in at.success)  # the page escapes its Markdown
    refused = any("cannot check claims of this kind" in e.value for e in at.error)
    assert saved != refused, "a calibration is either saved or refused, and the page says which"
    kept = list((data_dir / "calibrations" / "fake--contrast").glob("*.json")) if (data_dir / "calibrations").exists() else []
    assert bool(kept) == saved


def test_a_checker_sees_the_plan_but_cannot_calibrate(monkeypatch: pytest.MonkeyPatch, data_dir: Path, tmp_path: Path) -> None:
    users = users_file(tmp_path / "users.toml")
    browser(monkeypatch, data_dir, users, "bo")  # Bo's browser, signed in as the sign-in form would have
    at = fake_app(monkeypatch, data_dir, timeout=300, users_file=str(users))
    at.switch_page("pages/calibrate.py").run()
    assert any("only an editor calibrates" in i.value for i in at.info)
    at = plan(at)
    assert not [b for b in at.button if b.label == "Calibrate"]


def test_a_checker_cannot_make_the_server_call_an_address_the_desk_does_not_use(
    monkeypatch: pytest.MonkeyPatch, data_dir: Path, tmp_path: Path
) -> None:
    """The probe is a call from the server to the address typed in the form: a checker's is refused before it is made."""
    from pipelines.eval import calibrate as cal

    probed: list[str] = []
    real_probe = cal.probe
    monkeypatch.setattr(cal, "probe", lambda config, services: probed.append(config.role("judge").base_url) or real_probe(config, services))
    users = users_file(tmp_path / "users.toml")
    browser(monkeypatch, data_dir, users, "bo")
    at = fake_app(monkeypatch, data_dir, timeout=300, users_file=str(users))
    at.switch_page("pages/calibrate.py").run()
    at.selectbox[0].select("openai")
    at.text_input[1].input("http://169.254.169.254/latest/v1")
    at = plan(at)
    assert any("only an editor may point a calibration at an endpoint the desk does not use" in e.value for e in at.error)
    assert probed == [], "no call was made"
    at.selectbox[0].select("fake")  # the desk's own endpoint: the checker may look at its plan
    at.text_input[1].input("")
    at = plan(at)
    assert probed == [""] and any("for 10 claims" in i.value for i in at.info)
