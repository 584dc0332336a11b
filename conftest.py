"""pytest entry point: the matrix plugin (matrix/plugin.py) and its lab
options: boards, LAVA jobs, KCIDB export (matrix/lab.py)."""
pytest_plugins = ["matrix.plugin", "matrix.lab"]
