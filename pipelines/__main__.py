"""``python -m pipelines``: the command-line interface."""

from pipelines.cli import main

raise SystemExit(main())
