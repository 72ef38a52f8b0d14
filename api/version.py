"""The installed release's version, read once from the package metadata."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["VERSION"]


def _installed() -> str:
    try:
        return version("tooldedup")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"


VERSION = _installed()
