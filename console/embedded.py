"""`apc` with no server: the engine in-process in the user data folder, and its MCP endpoint beside it.

First start writes an org config (one group per sample role, a local operator in every group, one
agent) with fresh tokens to `org.toml` in the data folder, readable only by the user, and publishes
the sample processes. Every start serves the endpoint on 127.0.0.1 from port 8765 up and shows its
URL, the agent token and a client config to paste.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import platformdirs

from console.app import Session
from console.client.local import LocalClient
from console.samples import publish_samples
from console.screens.main import EndpointInfo
from engine.core import Engine
from engine.document import load_path
from engine.http.app import first_free_port, start_server
from engine.identity import Identity
from engine.org import OrgConfig, new_token

ORG_FILE = "org.toml"
OPERATOR_EMAIL = "operator@apc.local"
AGENT_ID = "local-agent"
HOST = "127.0.0.1"
SAMPLES_DIR = Path(__file__).resolve().parents[1] / "sample_processes"


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("apc"))


def sample_roles(folder: Path) -> list[str]:
    """Every role the sample processes name, each once, in folder order."""
    roles: dict[str, None] = {}
    for path in (
        sorted(p for p in folder.iterdir() if (p / "PROCESS.md").is_file()) if folder.is_dir() else []
    ):
        loaded = load_path(path)
        for role in loaded.process.roles if loaded.process is not None else ():
            roles.setdefault(role)
    return list(roles)


def org_toml(roles: list[str], operator_token: str, agent_token: str) -> str:
    """The generated org config; strings are written as JSON strings, which TOML reads the same."""
    lines: list[str] = ["# Written by apc on first start: the local console's organization.", ""]
    for role in roles:
        lines += ["[[groups]]", f"id = {json.dumps(role)}", f"members = [{json.dumps(OPERATOR_EMAIL)}]", ""]
    lines += [
        "[[people]]",
        f"email = {json.dumps(OPERATOR_EMAIL)}",
        f"token = {json.dumps(operator_token)}",
        "operator = true",
        "",
    ]
    lines += ["[[agents]]", f"id = {json.dumps(AGENT_ID)}", f"token = {json.dumps(agent_token)}", ""]
    return "\n".join(lines)


def agent_token(path: Path) -> str:
    """The local agent's token as written in the org file (the org itself keeps only digests)."""
    import tomllib

    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    return str(next(a["token"] for a in raw.get("agents", []) if a.get("id") == AGENT_ID))


def ensure_org(data_dir: Path, samples: Path = SAMPLES_DIR) -> tuple[OrgConfig, bool]:
    """The org from `org.toml`, written first (owner-only) when missing; True when it was just created."""
    path = data_dir / ORG_FILE
    created = not path.exists()
    if created:
        data_dir.mkdir(parents=True, exist_ok=True)
        text = org_toml(sample_roles(samples), new_token(), new_token())
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
    return OrgConfig.load(path), created


async def open_embedded(data_dir: Path, samples: Path = SAMPLES_DIR) -> Session:
    """Open the engine, publish the samples on first start, start the endpoint: a ready session."""
    org, created = ensure_org(data_dir, samples)
    port = first_free_port(HOST, 8765)
    engine = await Engine.open(data_dir, org, public_base_url=f"http://{HOST}:{port}")
    engine.start_delivery()
    notices: list[str] = []
    if created and samples.is_dir():
        published, refused = await publish_samples(engine, samples)
        notices.append(f"Published {len(published)} sample processes.")
        notices += [f"Not published: {name}: {'; '.join(issues)}" for name, issues in refused.items()]
    server = await start_server(engine, HOST, port)
    notices.insert(
        0, f"MCP endpoint {server.url}: the agent token and a client config are in the Endpoint tab (4)."
    )

    async def close() -> None:
        await server.stop()
        await engine.close()

    operator = Identity("person", OPERATOR_EMAIL, operator=True)
    endpoint = EndpointInfo(server.url, AGENT_ID, agent_token(data_dir / ORG_FILE), data_dir)
    return Session(
        LocalClient(engine, operator),
        f"embedded · {data_dir}",
        clock=engine.clock,
        endpoint=endpoint,
        close=close,
        notices=notices,
    )
