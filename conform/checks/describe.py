"""describe: what the server says it offers (spec §4.1, §4.2, §8; tools.md describe)."""

from __future__ import annotations

from conform.client import refused_token
from conform.expect import equal, fail, true
from conform.registry import check
from conform.session import Session

REQUIRED_TOOLS = (
    "describe", "list_processes", "start_run", "get_run", "get_work", "claim", "submit", "escalate", "decide",
    "cancel",
)  # fmt: skip


@check("describe.protocol", "spec §4.1; tools.md describe")
async def protocol(s: Session) -> None:
    """Every identity gets the same answer: protocol, version, lease, person format, tools, limits."""
    first = await s.ok(s.agent, "describe")
    equal("describe.protocol", first["protocol"], "agentprocess")
    equal("describe.version", first["version"], "core-2")
    true(
        isinstance(first["leaseSeconds"], int) and first["leaseSeconds"] > 0,
        f"leaseSeconds: expected a positive whole number, got {first['leaseSeconds']!r}",
    )
    true(
        bool(first["person"]["format"].strip()),
        "person.format: expected a description of person values, got a blank",
    )
    missing = [tool for tool in REQUIRED_TOOLS if tool not in first["tools"]]
    true(not missing, f"tools: expected every required tool, missing {missing}")
    true(len(set(first["tools"])) == len(first["tools"]), f"tools: listed more than once: {first['tools']}")
    true(first["limits"]["runDataBytes"] > 0, "limits.runDataBytes: expected a positive number")
    for who in (s.agent2, s.person1, s.operator, s.outsider):
        equal(f"describe as {who.name}", await s.ok(who, "describe"), first)


@check("describe.optional-tools", "spec §4.2")
async def optional_tools(s: Session) -> None:
    """The runner's processes use file evidence and wait_for, so upload and send_event are offered."""
    tools = (await s.ok(s.agent, "describe"))["tools"]
    for tool in ("upload", "send_event"):
        true(tool in tools, f"tools: expected {tool} (a published process needs it), got {tools}")


@check("describe.profiles", "spec §8; check profile §5")
async def profiles(s: Session) -> None:
    """Profiles are listed once each; with check-1 the check limits are within range."""
    data = await s.ok(s.agent, "describe")
    listed = data["profiles"]
    true(len(set(listed)) == len(listed), f"profiles: listed more than once: {listed}")
    unknown = [p for p in listed if p not in ("parallel-1", "check-1")]
    true(not unknown, f"profiles: expected parallel-1 or check-1 only, got {unknown}")
    if "check-1" in listed:
        limits = data["limits"]
        for key in ("checkPass", "checkConfidence"):
            true(0 <= limits[key] <= 1, f"limits.{key}: expected 0 to 1, got {limits[key]}")
        fail_below = limits["checkFail"]
        true(
            fail_below is None or 0 <= fail_below <= limits["checkPass"],
            f"limits.checkFail: expected null or 0 to checkPass, got {fail_below}",
        )
        true(limits["checkStateBytes"] > 0, "limits.checkStateBytes: expected a positive number")


@check("describe.envelope", "spec §4; tools.md")
async def envelope(s: Session) -> None:
    """A result is one envelope, as structured content and as its JSON text, with isError when ok is false."""
    connection = s.shared.connection
    for tool, arguments in (("describe", {}), ("get_run", {"runId": "r_conform_no_such_run"})):
        reply = await connection.call(s.agent, tool, arguments)
        if reply.problems:
            fail(f"{tool}: {'; '.join(reply.problems)}")
    equal(
        "get_run of an unknown run",
        (await s.send(s.agent, "get_run", runId="r_conform_no_such_run"))["error"]["code"],
        "not_found",
    )


@check("describe.unknown-token", "spec §4 (OAuth 2.1 bearer tokens)")
async def unknown_token(s: Session) -> None:
    """A bearer token the server never issued opens nothing."""
    for server in s.shared.config.servers:
        refusal = await refused_token(server, "apc-conform-token-nobody-issued")
        true(
            refusal is not None,
            f"{server}: expected an unknown bearer token to be refused, it may call describe",
        )
