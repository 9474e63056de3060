"""The built wheel, installed into a fresh virtual environment outside the clone, works on its own.

The wheel is built from a copy of the sources (so the clone gets no `build/` folder) with the
project's own setuptools, and installed without its dependencies; those are borrowed from the
project's environment through a `.pth` path line, which adds the folder to `sys.path` without
running the `.pth` files in it, so the editable install of the clone is never loaded. Everything
runs with the working directory in a temporary folder: the samples, themes and answers must come
from the installed package.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = (
    "pyproject.toml",
    "README.md",
    "LICENSE",
    "engine",
    "console",
    "conform",
    "demo",
    "apc",
    "sample_processes",
    "themes",
)
TIMEOUT = 120

DESCRIBE = """
import asyncio, sys
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

async def main(url: str, token: str) -> None:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("describe", {})
                print(result.content[0].text)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


@dataclass(frozen=True)
class Installed:
    venv: Path
    work: Path
    wheel: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def apc(self) -> Path:
        return self.venv / "bin" / "apc"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "APC_TOKEN")}
        env["XDG_DATA_HOME"] = str(self.work / "xdg-data")
        env["XDG_CONFIG_HOME"] = str(self.work / "xdg-config")
        return env

    def run(self, *argv: str | Path, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in argv],
            cwd=self.work,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def _copy_sources(target: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")
    for name in SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, symlinks=True, ignore=ignore)
        else:
            shutil.copy2(source, target / name)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    root = tmp_path_factory.mktemp("wheel")
    assert not root.resolve().is_relative_to(REPO)
    source, dist, venv, work = root / "src", root / "dist", root / "venv", root / "work"
    work.mkdir()
    source.mkdir()
    _copy_sources(source)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", "--quiet"]
    built = subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", dist, source],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert built.returncode == 0, built.stderr
    [wheel] = dist.glob("agentprocess_console-*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True, timeout=TIMEOUT)
    target = venv / "bin" / "python"
    done = subprocess.run(
        [*pip, "--python", target, "install", "--no-deps", "--no-index", wheel],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    site = subprocess.run(
        [target, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "project-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    yield Installed(venv, work, wheel)


def test_the_wheel_carries_every_module_the_samples_the_themes_the_stories_and_the_license(
    installed: Installed,
) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    modules = {
        path.relative_to(REPO).as_posix()
        for folder in ("engine", "console", "conform", "demo", "apc")
        for path in (REPO / folder).rglob("*.py")
        if "__pycache__" not in path.parts and "bundled" not in path.parts
    }
    assert modules - names == set()
    samples = {
        f"console/bundled/sample_processes/{p.relative_to(REPO / 'sample_processes').as_posix()}"
        for p in (REPO / "sample_processes").rglob("*")
        if p.is_file()
    }
    themes = {f"console/bundled/themes/{p.name}" for p in (REPO / "themes").glob("*.toml")}
    assert samples - names == set() and themes - names == set()
    assert "console/app.tcss" in names
    stories = {p.relative_to(REPO).as_posix() for p in (REPO / "demo" / "stories").glob("*.toml")}
    assert len(stories) == 3 and stories - names == set()
    conform_data = {
        p.relative_to(REPO).as_posix()
        for pattern in ("processes/**/PROCESS.md", "schemas/**/*.json")
        for p in (REPO / "conform").glob(pattern)
    }
    assert len(conform_data) > 30 and conform_data - names == set()
    info = next(n for n in names if n.endswith(".dist-info/METADATA"))
    metadata = zipfile.ZipFile(installed.wheel).read(info).decode()
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_the_code_runs_from_the_fresh_environment_not_from_the_clone(installed: Installed) -> None:
    probe = (
        "import json, console, engine; from console.resources import bundled; "
        "print(json.dumps([console.__file__, engine.__file__, str(bundled('sample_processes'))]))"
    )
    done = installed.run(installed.python, "-c", probe)
    assert done.returncode == 0, done.stderr
    for path in json.loads(done.stdout):
        assert Path(path).is_relative_to(installed.venv), path


def test_conform_finds_its_processes_and_schemas_in_the_installed_package(installed: Installed) -> None:
    """`apc conform` reads its test processes and JSON Schemas as package data, not from the clone."""
    listed = installed.run(installed.apc, "conform", "--list", "--only", "describe")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("describe.protocol (")
    setup = installed.run(installed.apc, "conform", "--print-setup", "setup")
    assert setup.returncode == 0, setup.stderr
    assert (installed.work / "setup" / "processes" / "conform-vendor" / "PROCESS.md").is_file()
    loaded = installed.run(
        installed.python, "-c", "from conform import contracts; print(len(contracts.load().results))"
    )
    assert (loaded.returncode, loaded.stdout.strip()) == (0, "14"), loaded.stderr


def test_apc_version(installed: Installed) -> None:
    done = installed.run(installed.apc, "--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, "apc 0.1.0\n", "")


def test_validate_a_bundled_sample_found_through_the_installed_package(installed: Installed) -> None:
    where = installed.run(
        installed.python, "-c", "from console.resources import bundled; print(bundled('sample_processes'))"
    )
    samples = Path(where.stdout.strip())
    assert samples.is_relative_to(installed.venv)
    done = installed.run(installed.apc, "validate", samples / "customer-refund", samples / "README.md")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.fullmatch(
        rf"{re.escape(str(samples / 'customer-refund'))}: valid: customer-refund "
        r"\(profiles: check-1; content hash [0-9a-f]{64}\)",
        done.stdout.splitlines()[0],
    )
    assert done.stdout.splitlines()[1] == "1 valid, 0 invalid, 1 skipped"
    assert done.stderr == f"apc validate: skipped {samples / 'README.md'}: a README, not a process document\n"


def test_the_headless_demo_runs_from_the_installed_package(installed: Installed) -> None:
    done = installed.run(
        installed.apc,
        "demo",
        "--headless",
        "--runs",
        "2",
        "--speed",
        "6000",
        "--port",
        "0",
        "--time-limit",
        "60",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].startswith("published 10 processes: ")
    assert lines[2] == "checks answered by scripted:check-answers.toml"
    assert lines[-1].startswith("2/2 runs ended in ")


def test_serve_answers_describe_over_mcp(installed: Installed) -> None:
    config = installed.work / "org.toml"
    config.write_text('[[agents]]\nid = "a_wheel"\ntoken = "wheel-agent-token-1"\n')
    with subprocess.Popen(
        [str(installed.apc), "serve", "--config", str(config), "--port", "0", "--data", "serve-data"],
        cwd=installed.work,
        env=installed.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        try:
            assert server.stderr is not None
            url = None
            for line in server.stderr:
                found = re.search(r"serving (http://127\.0\.0\.1:\d+/mcp)", line)
                if found:
                    url = found.group(1)
                    break
            assert url is not None and not url.endswith(":0/mcp"), "the server did not start"
            done = installed.run(installed.python, "-c", DESCRIBE, url, "wheel-agent-token-1")
            assert done.returncode == 0, done.stderr
            envelope = json.loads(done.stdout)
            assert envelope["ok"] is True
            assert (envelope["data"]["protocol"], envelope["data"]["version"]) == ("agentprocess", "core-2")
        finally:
            server.send_signal(signal.SIGTERM)
            assert server.wait(timeout=30) == 0
