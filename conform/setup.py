"""`--print-setup DIR`: the runner's processes and ready configs for running it against our own server.

It writes `processes/` (every test process, plus the earlier `conform-versions` published first),
`org.toml` for `apc serve` (the identities, the processes bound to one group, short leases and small
limits so checks finish quickly, and a scripted evaluator so `check-1` is offered),
`check-answers.toml` (the evaluator's answers: `alpha` passes, `beta` fails, `gamma` is unsure), and
`conform.toml` for the runner with the same tokens. `--self` writes the same into a temporary folder.
Any other server publishes the same processes its own way and fills in a conform.toml.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from conform.catalog import PROCESS_FILE, Shipped, earlier, shipped
from conform.config import AGENTS

GROUP = "g_conform"
PEOPLE = {
    "operator": "conform.operator@example.com",
    "person1": "conform.one@example.com",
    "person2": "conform.two@example.com",
    "outsider": "conform.outsider@example.com",
}
AGENT_IDS = {"agent1": "a_conform_1", "agent2": "a_conform_2"}
LEASE_SECONDS = 1200
RUN_DATA_BYTES = 65536
MAX_UPLOAD_BYTES = 65536
DEFAULT_SPEED = 120.0
"""A minute of server time passes in half a second, a lease in ten: time checks take seconds."""

ANSWERS = """\
# Scripted check answers for the runner's conform-check process (apc conform --print-setup).
# `alpha` passes every question (the defaults below), `beta` fails them, and `gamma` is neither:
# the choice question answers `unclear`, which the process marks unsure.
default_yes = 0.97
default_confidence = 0.95
{entries}"""

YES_NO = "The output word is alpha."
CHOICE = "Which word is in the output?"
RUBRIC = "How well does the output follow the instructions?"


@dataclass(frozen=True)
class SetupFiles:
    org: Path
    conform: Path
    answers: Path
    processes: Path


def _answer(step: str, ask: str, word: str, answer: str) -> str:
    return (
        f'\n[[answer]]\nprocess = "conform-check"\nstep = "{step}"\nask = "{ask}"\n{answer}\n'
        f'when = {{ output = {{ word = "{word}" }} }}\n'
    )


def answers_text() -> str:
    entries = []
    for word, choice in (("beta", "beta"), ("gamma", "unclear")):
        entries.append(_answer("screen", YES_NO, word, "yes = 0.05"))
        entries.append(_answer("screen", CHOICE, word, f'choice = "{choice}"\nconfidence = 0.95'))
        entries.append(_answer("screen", RUBRIC, word, "level = 0\nconfidence = 0.95"))
        entries.append(_answer("advise", YES_NO, word, "yes = 0.05"))
        entries.append(_answer("review", YES_NO, word, "yes = 0.05"))
    return ANSWERS.format(entries="".join(entries))


def _write_process(root: Path, process: Shipped) -> Path:
    folder = root / process.folder
    folder.mkdir(parents=True, exist_ok=True)
    (folder / PROCESS_FILE).write_text(process.text, encoding="utf-8")
    return folder


def write_setup(
    directory: Path, speed: float = DEFAULT_SPEED, url: str = "http://127.0.0.1:8765/mcp"
) -> SetupFiles:
    """Write the processes and both configs into `directory` (created if needed); fresh tokens."""
    directory.mkdir(parents=True, exist_ok=True)
    processes = directory / "processes"
    ordered = [*earlier().values(), *shipped().values()]
    entries = []
    for process in ordered:
        folder = _write_process(processes, process)
        bind = ", ".join(f'{role} = "{GROUP}"' for role in process.roles)
        entries.append(
            f'[[processes]]\npath = "{folder.relative_to(directory).as_posix()}"\nbind = {{ {bind} }}\n'
        )
    tokens = {name: secrets.token_urlsafe(24) for name in (*PEOPLE, *AGENTS)}
    answers = directory / "check-answers.toml"
    answers.write_text(answers_text(), encoding="utf-8")
    org = directory / "org.toml"
    org.write_text(_org_text(tokens, entries), encoding="utf-8")
    conform = directory / "conform.toml"
    conform.write_text(_conform_text(tokens, speed, url), encoding="utf-8")
    return SetupFiles(org, conform, answers, processes)


def _org_text(tokens: dict[str, str], entries: list[str]) -> str:
    people = "".join(
        f'\n[[people]]\nemail = "{email}"\ntoken = "{tokens[name]}"\n'
        + ("operator = true\n" if name == "operator" else "")
        for name, email in PEOPLE.items()
    )
    agents = "".join(f'\n[[agents]]\nid = "{AGENT_IDS[name]}"\ntoken = "{tokens[name]}"\n' for name in AGENTS)
    return (
        "# An org for running `apc conform` against `apc serve` (written by apc conform --print-setup).\n"
        "# Short leases and small limits keep the checks quick; the scripted evaluator offers check-1.\n"
        f"[server]\nlease_seconds = {LEASE_SECONDS}\nrun_data_bytes = {RUN_DATA_BYTES}\n"
        f"max_upload_bytes = {MAX_UPLOAD_BYTES}\n\n"
        f'[[groups]]\nid = "{GROUP}"\nmembers = ["{PEOPLE["person1"]}", "{PEOPLE["person2"]}"]\n'
        f"{people}{agents}\n"
        + "\n".join(entries)
        + '\n[check]\nevaluator = "scripted"\nanswers = "check-answers.toml"\n'
    )


def _conform_text(tokens: dict[str, str], speed: float, url: str) -> str:
    people = "".join(
        f'\n[identities.{name}]\nperson = "{email}"\ntoken = "{tokens[name]}"\n'
        for name, email in PEOPLE.items()
    )
    agents = "".join(
        f'\n[identities.{name}]\nid = "{AGENT_IDS[name]}"\ntoken = "{tokens[name]}"\n' for name in AGENTS
    )
    return (
        "# apc conform: the identities and clock of the server under test.\n"
        "[server]\n"
        f'url = "{url}"\n'
        f"speed = {speed:g}            # the server's clock runs this many times faster than real time\n\n"
        f'[group]\nid = "{GROUP}"        # every role of the runner\'s processes is bound to this group\n'
        f"{people}{agents}"
    )
