"""The desk's one database: every table (``tables.py``), the migrations that build them (``migrations/``) and how an engine is opened (``engine.py``)."""
