"""The package version, importable without importing anything heavy: the one place it is
stated (pyproject.toml's ``[tool.hatch.version]`` reads it when the package is built)."""

__version__ = "0.1.0"
