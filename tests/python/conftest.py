"""Shared pytest fixtures for the Python tests: the stoker CLI under test and a way to run it."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def stoker_cli() -> str:
    """Path of the stoker binary, from $STOKER_CLI (scripts/test sets it to build/stoker)."""
    path = os.environ.get("STOKER_CLI")
    if not path:
        pytest.fail("set STOKER_CLI to the stoker binary (scripts/test does this)")
    if not Path(path).is_file():
        pytest.fail(f"STOKER_CLI={path} does not exist; build it first")
    return path


@pytest.fixture
def run_stoker(stoker_cli):
    """run_stoker(*args) -> CompletedProcess with text stdout/stderr; never raises on exit code."""

    def run(*args, timeout=120):
        return subprocess.run(
            [stoker_cli, *map(str, args)], capture_output=True, text=True, timeout=timeout
        )

    return run


@pytest.fixture(autouse=True)
def _own_cache_home(tmp_path_factory, monkeypatch):
    """Remote datasets read through a per-user cache under $XDG_CACHE_HOME by default: give each
    test its own, so that no test writes to the user's cache or finds another test's shards. It is
    removed when the test ends: what one test cached is of no use to another, and kept it would add
    up to hundreds of MB by the end of the suite."""
    home = tmp_path_factory.mktemp("xdg-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    yield
    shutil.rmtree(home, ignore_errors=True)
