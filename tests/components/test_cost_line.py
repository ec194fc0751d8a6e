from components.cost import cost_line, stage_table
from pipelines.record.digest import Cost


def test_the_cost_line_and_table_say_how_many_prompt_tokens_the_server_reused() -> None:
    cost = Cost(calls=41, tokens_in=9509, tokens_reused=5900, tokens_out=56, model_seconds=22.8, wall_seconds=23.4)
    assert cost_line(cost, running=False) == (
        "💰 **Cost**: 41 model calls · 9,509 tokens in (5,900 reused from the server's prompt cache) · 56 out · "
        "22.8 s of model time · 23 s wall time"
    )
    assert "reused" not in cost_line(Cost(calls=2, tokens_in=500, tokens_out=20), running=True)  # a server that says nothing of it
    table = stage_table({"stances": cost, "negation": Cost(calls=1, tokens_in=50, tokens_out=12)}).splitlines()
    assert table[0] == "| stage | calls | of which cached | tokens in | of which the server reused | tokens out | model s |"
    assert table[2] == "| stances | 41 | 0 | 9,509 | 5,900 | 56 | 22.80 |"
    assert table[-1] == "| **total** | 42 | 0 | 9,559 | 5,900 | 68 | 22.80 |"


def test_money_is_on_the_line_and_in_the_stage_table_only_when_the_run_has_prices() -> None:
    from pipelines.core.events import ModelCallCompleted

    priced = Cost().add_call(ModelCallCompleted(role="judge", model="gpt-4o-mini", tokens_in=1000, tokens_out=200, cost=0.0012))
    assert "0.0012 spent" in cost_line(priced, running=False)
    table = stage_table({"judge": priced, "debate": priced})
    assert table.splitlines()[0].endswith("spent |") and table.splitlines()[-1].endswith("0.0024 |")
    free = Cost().add_call(ModelCallCompleted(role="judge", model="local", tokens_in=1000, tokens_out=200))
    assert "spent" not in cost_line(free, running=False) and "spent" not in stage_table({"judge": free})
