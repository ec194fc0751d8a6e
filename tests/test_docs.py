"""The README and docs/ stay true: the options page is the config's, the README starts with the two commands, every link resolves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipelines.cli.main import OPTIONS_END, OPTIONS_START, options_table, with_options_table

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def test_the_options_page_matches_the_config() -> None:
    page = (ROOT / "docs" / "options.md").read_text()
    assert OPTIONS_START in page and OPTIONS_END in page
    assert page == with_options_table(page), "run `make docs` to refresh docs/options.md"
    assert options_table().splitlines()[2] in page


def test_readme_starts_with_the_two_commands() -> None:
    block = README.split("```bash", 1)[1].split("```", 1)[0]
    assert [line.split()[:2] for line in block.strip().splitlines()] == [["make", "run"], ["make", "test"]]
    assert "make run-fake" in README


def test_the_readme_is_a_door_not_the_manual() -> None:
    assert len(README.splitlines()) <= 250, "move the detail into docs/ and link it"


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered."""
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", FENCE.sub("", page.read_text()), flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(page: Path) -> list[str]:
    return [target for target in LINK.findall(FENCE.sub("", page.read_text())) if not re.match(r"^[a-z]+:", target)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
            continue
        if anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_link_checker_sees_links_and_anchors() -> None:
    page = ROOT / "docs" / "decisions.md"
    assert "durable-runs.md#durable-runs-the-checker-in-the-loop-history-and-audit" in links(page)
    assert "orchestration-overhead-wall-time-against-the-models-critical-path" in anchors(
        ROOT / "docs" / "measurements" / "2026-11-22-orchestration-overhead.md"
    )
