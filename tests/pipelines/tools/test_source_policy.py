import pytest

from pipelines.run.tools.source_policy import SourcePolicy, SourcePolicyError, parse_domains


def test_an_allow_list_admits_its_domains_and_their_subdomains_only() -> None:
    policy = SourcePolicy.build(allow=["nih.gov", ".edu"])
    assert policy.allows("https://nih.gov/page")
    assert policy.allows("https://www.ncbi.nlm.nih.gov/pmc/articles/1")
    assert policy.allows("http://med.stanford.edu/news")
    assert not policy.allows("https://example.com/nih.gov")
    assert not policy.allows("https://notnih.gov/")  # a suffix of letters is not a subdomain
    assert policy.verdict("https://blog.example.org/x") == "blog.example.org is not on the allow list"


def test_the_deny_list_wins_over_the_allow_list() -> None:
    policy = SourcePolicy.build(allow=["gov"], deny=["fakecdc.gov"])
    assert policy.allows("https://www.cdc.gov/flu")
    assert not policy.allows("https://news.fakecdc.gov/story")
    assert "deny list (fakecdc.gov)" in (policy.verdict("https://fakecdc.gov/") or "")


def test_only_a_deny_list_lets_everything_else_through() -> None:
    policy = SourcePolicy.build(deny=["example.com"])
    assert policy.allows("https://who.int/")
    assert not policy.allows("https://sub.example.com/a")
    assert not policy.allows("javascript:alert(1)")  # no host, never evidence


def test_the_health_preset_allows_government_universities_and_journals() -> None:
    policy = SourcePolicy.build("health")
    assert policy.allows("https://www.cdc.gov/") and policy.allows("https://www.nature.com/articles/x")
    assert policy.allows("https://www.who.int/news") and policy.allows("https://www.harvard.edu/")
    assert not policy.allows("https://www.dailymail.co.uk/health")


def test_an_open_policy_restricts_nothing() -> None:
    policy = SourcePolicy.build()
    assert not policy.restricts and policy.allows("https://anything.example/") and policy.describe() == "any site"


def test_domains_are_normalized() -> None:
    assert parse_domains(" .GOV, *.nih.gov\nwho.int; who.int  Bücher.de.") == ["gov", "nih.gov", "who.int", "xn--bcher-kva.de"]


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("https://www.nature.com/articles", "write only the domain, e.g. www.nature.com"),
        ("nature.com/articles", "write only the domain"),
        ("localhost:8080", "write only the domain"),
        ("exa mple.com", "not a valid domain"),
        ("-bad-.com", "not a valid domain"),
        ("a..b", "not a valid domain"),
        ("under_score.org", "not a valid domain"),
        ("*.", "empty domain"),
    ],
)
def test_bad_domains_are_refused_with_a_message_that_says_how_to_fix_them(rule: str, message: str) -> None:
    with pytest.raises(SourcePolicyError, match=message):
        parse_domains([rule])


def test_an_unknown_preset_lists_the_valid_ones() -> None:
    with pytest.raises(SourcePolicyError, match="choose one of: open, health"):
        SourcePolicy.build("strict")
