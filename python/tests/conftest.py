"""Shared fixtures: small generated puzzles, the real puzzle sets (``$CONCUR_PUZZLES``, else
``../shared/puzzles`` beside the repository), and the command-line binary when it was built
(``target/release/concur``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import concur

ROOT = Path(__file__).resolve().parents[2]


def puzzles_dir() -> Path | None:
    env = os.environ.get("CONCUR_PUZZLES")
    d = Path(env) if env else ROOT.parent / "shared" / "puzzles"
    return d if d.is_dir() else None


def binary() -> Path | None:
    b = ROOT / "target" / "release" / "concur"
    return b if b.is_file() and os.access(b, os.X_OK) else None


def run_cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    b = binary()
    assert b is not None
    env = dict(os.environ, NODEVICE_SELECT="1")
    out = subprocess.run([str(b), *args], capture_output=True, text=True, env=env, timeout=300)
    if check and out.returncode not in (0, 1):
        raise AssertionError(f"concur {' '.join(args)} exited {out.returncode}: {out.stderr}")
    return out


def cli_json(*args: str) -> dict:
    return json.loads(run_cli(*args).stdout)


@pytest.fixture(scope="session")
def p4() -> concur.Puzzle:
    """A 4x4 with a planted solution (the map solves it well under a second)."""
    return concur.Puzzle.generate(4, 4, seed=7)


@pytest.fixture(scope="session")
def p5() -> concur.Puzzle:
    return concur.Puzzle.generate(5, 5, seed=2)


@pytest.fixture
def cli():
    """The built command line, or a skip that says how to build it."""
    if binary() is None:
        pytest.skip("target/release/concur is not built (cargo build --release): the command-line comparison is skipped")
    return run_cli
