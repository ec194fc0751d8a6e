"""The benches' own small data (``seen_before_paraphrases.jsonl``, written by the team) and the scripts that build local
dev sets from fetched public datasets (issue 51).

Each builder (``make_fm2.py``, ``fix_liar_dev.py``) reads a fetched copy of a public repository (a checkout, or the bare
git directory a fetch brings) and writes a folder in the layout of ``../shared/data/liar-plus/``: claims files of JSON
lines and a ``corpus.jsonl``, with a README that names the source, its commit and licence, and how the folder was
built. What they write is for this machine only and is never committed: only the scripts are.
"""
