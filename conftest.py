"""pytest entry point: the matrix plugin (matrix/plugin/hooks.py) and its lab
options: boards, LAVA jobs, KCIDB export (matrix/plugin/lab.py)."""
pytest_plugins = ["matrix.plugin.hooks", "matrix.plugin.lab"]
