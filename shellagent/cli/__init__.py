"""Command lines: ``ask`` (cli/ask.py, stdlib only) and ``shellagent`` (cli/main.py)."""
