"""English stopwords, one list for every word match: BM25's tokens, the fake model's overlap, the memory's entity match.

It is bm25s's English list (NLTK's). BM25 indexes are built from it, so changing it changes
every index's tokens: bump ``pipelines.run.tools.lexical.FORMAT_VERSION`` with it, so saved
indexes are rebuilt.
"""

from bm25s.stopwords import STOPWORDS_EN_PLUS

STOPWORDS = frozenset(STOPWORDS_EN_PLUS)
