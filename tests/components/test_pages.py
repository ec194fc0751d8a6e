"""The app's page list: every page exists, is framed and titles itself from the list; Streamlit's Deploy button is hidden."""

import tomllib
from pathlib import Path

import pytest

from components.pages import PAGES, page_info

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("info", PAGES, ids=lambda p: p.path)
def test_each_page_titles_itself_from_the_page_list(info) -> None:  # type: ignore[no-untyped-def]
    source = (ROOT / info.path).read_text(encoding="utf-8")
    assert f'state.ensure_framed("{info.path}")' in source
    assert f'render_page_header("{info.path}")' in source
    assert "st.title(" not in source  # one scheme: the heading comes from PAGES


def test_an_unknown_page_lists_the_pages() -> None:
    with pytest.raises(KeyError, match="pages/verify.py"):
        page_info("pages/nope.py")


def test_the_toolbar_has_no_deploy_button() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["toolbarMode"] == "viewer"
