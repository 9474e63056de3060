"""Shared test locations."""

from pathlib import Path

REPO_DIR = Path(__file__).resolve().parents[1]
SPEC_DIR = (REPO_DIR / ".." / "shared" / "agentprocess").resolve()
"""The reference copy of the specification: /work/shared/agentprocess."""
