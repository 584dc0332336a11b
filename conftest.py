"""pytest entry point: the matrix plugin (matrix/plugin.py)."""
pytest_plugins = ["matrix.plugin"]
