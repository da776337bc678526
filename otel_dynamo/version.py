"""The package version, importable without importing anything heavy."""

__version__ = "0.1.0"
