"""``python -m pipelines``: the command-line interface."""

from pipelines.cli.main import main

raise SystemExit(main())
