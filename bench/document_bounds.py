"""How long the worst documents under the size cap take to accept or refuse, beside an ordinary one.

Each case is loaded whole (`engine.document.load`: split, parse, validate, hash), best of a few
rounds. The baseline is the largest sample process; the ratios say how many ordinary documents the
worst case costs. The bounds themselves are tested by counting parser events and values
(tests/engine/document/test_parse_bound.py, tests/engine/document/test_parse.py), never by time.

    .venv/bin/python bench/document_bounds.py [--rounds N]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.document import load
from engine.document.parse import MAX_EVENTS

SAMPLE = Path(__file__).resolve().parents[1] / "sample_processes" / "production-change-release" / "PROCESS.md"


def document(frontmatter: str) -> str:
    return f"---\n{frontmatter}---\n# Bench\n"


def flow_list() -> str:
    """One long flow list just under the 256 KiB frontmatter cap: refused at the event cap."""
    return document("x: [" + ",".join(["a"] * 125_000) + "]\n")


def block_keys() -> str:
    return document("x:\n" + "".join(f"  k{i}: v\n" for i in range(20_000)))


def aliases() -> str:
    """Billion laughs: few events, refused when the expansion passes the value cap."""
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 9)]
    return document("\n".join(lines) + "\n")


def many_steps() -> str:
    """A valid document just under the event cap: 800 agent steps of 11 events each."""
    steps = "".join(
        f"  - id: s{i}\n    agent: Do part {i}.\n    output: {{ a: string }}\n" for i in range(800)
    )
    return document(f"name: many\ndescription: Many steps.\nsteps:\n{steps}  - id: done\n    finish: done\n")


def best(text: str, rounds: int) -> tuple[float, bool]:
    times = []
    ok = False
    for _ in range(rounds):
        started = time.perf_counter()
        ok = load(text).ok
        times.append(time.perf_counter() - started)
    return min(times), ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    baseline, _ = best(SAMPLE.read_text(encoding="utf-8"), rounds)
    print(f"event cap: {MAX_EVENTS} events")
    print(f"baseline (largest sample process, accepted): {baseline * 1000:.1f} ms")
    cases: list[tuple[str, Callable[[], str]]] = [
        ("flow list of 125000 items, 250 KB", flow_list),
        ("20000 block keys, 200 KB", block_keys),
        ("aliases expanding past the value cap", aliases),
        ("800 valid steps near the event cap", many_steps),
    ]
    for label, make in cases:
        text = make()
        elapsed, ok = best(text, rounds)
        verdict = "accepted" if ok else "refused"
        print(f"{label} ({verdict}): {elapsed * 1000:.1f} ms")
        print(f"ratio {label} / baseline: {elapsed / baseline:.2f}")


if __name__ == "__main__":
    main()
