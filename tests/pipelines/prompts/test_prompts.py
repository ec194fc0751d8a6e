import re
from importlib import resources

import pytest

from pipelines.prompts import load_prompt
from pipelines.protocols.base import protocol_names


def prompt_names() -> list[tuple[str, str | None]]:
    """Every prompt: the shared ones, and each protocol's own in its folder's prompts/."""
    shared = [(p.name[:-3], None) for p in resources.files("pipelines.prompts").iterdir() if p.name.endswith(".md")]
    folders = (f"pipelines.protocols.{name}" for name in protocol_names())
    own = [
        (p.name[:-3], f)
        for f in folders
        if (d := resources.files(f).joinpath("prompts")).is_dir()
        for p in d.iterdir()
        if p.name.endswith(".md")
    ]
    return sorted(shared) + sorted(own)


@pytest.mark.parametrize(("name", "package"), prompt_names())
def test_every_prompt_declares_exactly_the_variables_it_uses(name: str, package: str | None) -> None:
    import re

    prompt = load_prompt(name, package)
    used = set(re.findall(r"\{([a-z_]+)\}", prompt.system + prompt.user))
    assert used == set(prompt.variables), f"{name}: declares {prompt.variables}, uses {sorted(used)}"
    assert prompt.system and prompt.user


def test_render_refuses_missing_variables() -> None:
    with pytest.raises(TypeError, match="missing"):
        load_prompt("single_answer", "pipelines.protocols.single").render(claim="x")


def test_braces_that_are_not_variables_are_left_alone() -> None:
    messages = load_prompt("search_queries").render(claim="c", n=2)
    assert '{"queries"' in str(messages[0].content)


@pytest.mark.parametrize(
    ("claim", "arguments"),
    [
        ("Masks stop {exhibit} spreading", "none"),  # the claim names a later variable
        ("Masks stop flu", "the claim says {claim}; the passage {exhibit}"),  # a model's text names earlier ones
    ],
)
def test_a_value_that_names_a_variable_is_kept_word_for_word(claim: str, arguments: str) -> None:
    """Every placeholder is filled in one pass: a claim, web page or model text holding ``{exhibit}`` gets no passage pasted in."""
    exhibit = "PASSAGE-TEXT"
    user = str(load_prompt("desk_stance").render(claim=claim, exhibit=exhibit, arguments=arguments, options="A, B")[1].content)
    assert f"Claim: {claim}" in user
    assert user.count(exhibit) == 1, "the passage appears once, where the template puts it"
    if "{exhibit}" in arguments:
        assert arguments in user


# A JSON example's value the model could copy: a number, true/false/null, a label in capitals or an evidence id.
COPYABLE = re.compile(r'(?::\s*|\[\s*)(-?\d|true\b|false\b|null\b|"[A-Z][A-Z ]+"|"E\d+")')


@pytest.mark.parametrize(("name", "package"), prompt_names())
def test_no_json_example_gives_a_value_to_copy(name: str, package: str | None) -> None:
    """The embedded 1.5B model copied the example's values into its answers: every PROClaim exhibit ruled
    relevance 0.0 and credibility 0.0 and discarded, every panel vote INCONCLUSIVE with scores of 0, madke's
    debaters picking items 3 and 7 whatever the pool. An example shows the fields and what each may hold
    ("<0 to 10>", "<true or false>"), never a value. (A worked example of several contrasting answers, introduced
    with "like:", shows both outcomes and is allowed: faithfulness_verdicts.)"""
    prompt = load_prompt(name, package)
    for example in re.findall(r"JSON only:\s*(\{.*?\})\.?\s*$", prompt.system + "\n" + prompt.user, flags=re.MULTILINE | re.DOTALL):
        assert not COPYABLE.search(example), f"{name}: {example}"
