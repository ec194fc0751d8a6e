"""The command line: ``python -m pipelines COMMAND``, one module per group of commands."""
