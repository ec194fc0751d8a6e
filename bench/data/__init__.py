"""Scripts that build local dev sets from fetched public datasets (issue 51).

Each reads a fetched copy of a public repository (a checkout, or the bare git directory a fetch brings) and writes a
folder in the layout of ``../shared/data/liar-plus/``: claims files of JSON lines and a ``corpus.jsonl``, with a README
that names the source, its commit and licence, and how the folder was built. The data they write is for this machine
only and is never committed: only the scripts are.
"""
