"""pytest entry point: the matrix plugin (matrix/plugin/: its options, its
hooks, and its lab options: boards, LAVA jobs, KCIDB export)."""
pytest_plugins = ["matrix.plugin.options", "matrix.plugin.hooks",
                  "matrix.plugin.lab"]
