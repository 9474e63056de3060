"""The runner's processes as the server lists and runs them (spec §2.1, §2.3, §6 rule 5; tools.md
list_processes, start_run)."""

from __future__ import annotations

from typing import Any

from conform.catalog import listed_item, needed
from conform.expect import equal, fail, near, true
from conform.registry import check
from conform.session import Session, at_offset, rid, work_item

TYPED_GOOD: dict[str, Any] = {
    "s": "text",
    "n": 1.5,
    "b": False,
    "d": "2026-02-28",
    "dt": "2026-10-07T09:00:00+02:00",
    "l": [1, 2.5],
    "o": {"any": ["thing"]},
    "opt": "red",
}
TYPED_WRONG: dict[str, Any] = {
    "s": 5,
    "n": "1.5",
    "b": "yes",
    "d": "2026-02-30",
    "dt": "2026-10-07T09:00:00",
    "l": [1, "2"],
    "o": [],
    "opt": "green",
}


@check("processes.listed", "tools.md list_processes; spec §2.1 requires")
async def listed(s: Session) -> None:
    """Every runner process once, with its description, latest version, inputs as written, requires."""
    items = await s.everything(s.outsider, "list_processes")
    names = [item["name"] for item in items]
    twice = sorted({n for n in names if names.count(n) > 1})
    true(not twice, f"list_processes: listed more than once: {twice}")
    by_name = {item["name"]: item for item in items}
    for process in needed(s.described["profiles"]):
        item = by_name[process.name]
        version = item["version"]
        true(
            isinstance(version, int) and version >= 1,
            f"{process.name}: version must be a whole number from 1, got {version!r}",
        )
        equal(f"list_processes item {process.name}", item, listed_item(process, version))
    true(
        by_name["conform-versions"]["version"] >= 2,
        "conform-versions: expected two published versions (publish processes/earlier/conform-versions first)",
    )


@check("processes.body", "spec §2, §6 rule 5")
async def body(s: Session) -> None:
    """The body is everything after the closing `---` line, exactly as written, in views and claims."""
    expected = s.process("conform-vendor").body
    view = await s.start("conform-vendor", {"vendorName": "Acme"})
    equal("start_run body", view["body"], expected)
    claimed = await s.claim(view["run"]["id"], "check_vendor")
    equal("claim body", claimed["body"], expected)
    equal("get_run body", (await s.view(view["run"]["id"], s.outsider))["body"], expected)


@check("processes.versions", "spec §6 rule 5; tools.md start_run", covers=("start_run/not_found",))
async def versions(s: Session) -> None:
    """A run starts the latest version unless it names one, and keeps the version it started with."""
    latest = s.version("conform-versions")
    current = await s.start("conform-versions", {"topic": "t"})
    equal("version of a run started without one", current["run"]["version"], latest)
    equal("body of the latest version", current["body"], s.process("conform-versions").body)
    pinned = await s.start("conform-versions", {"topic": "t"}, version=latest - 1)
    equal("version of a run started with version", pinned["run"]["version"], latest - 1)
    equal("body of the earlier version", pinned["body"], s.earlier("conform-versions").body)
    again = await s.view(pinned["run"]["id"])
    equal("get_run of the pinned run", (again["run"]["version"], again["body"]), (latest - 1, pinned["body"]))
    await s.refused(
        s.agent,
        "start_run",
        "not_found",
        process="conform-versions",
        version=latest + 1,
        inputs={"topic": "t"},
    )
    await s.refused(s.agent, "start_run", "not_found", process="conform-no-such-process", inputs={})


@check("processes.run-at-start", 'tools.md "Run view"; spec §3.2, §3.5')
async def run_at_start(s: Session) -> None:
    """A live run (the default mode) as start_run returns it: header, data, every step, no items."""
    view = await s.start("conform-vendor", {"vendorName": "Acme", "amount": 48000}, mode="live")
    run = view["run"]
    started = run["startedAt"]
    equal(
        "run",
        run,
        {
            "id": run["id"],
            "process": "conform-vendor",
            "version": s.version("conform-vendor"),
            "mode": "live",
            "state": "active",
            "outcome": None,
            "ended": None,
            "startedBy": s.agent.value,
            "startedAt": started,
            "updatedAt": started,
        },
    )
    equal("data", view["data"], {"inputs": {"vendorName": "Acme", "amount": 48000}, "steps": {}})
    equal(
        "steps",
        view["steps"],
        [
            {
                "id": "check_vendor",
                "kind": "agent",
                "state": "ready",
                "due": near(at_offset(started, 86400)),
                "overdue": False,
            },
            {"id": "approve", "kind": "approve", "state": None},
            {"id": "decline", "kind": "finish", "state": None},
            {"id": "done", "kind": "finish", "state": None},
        ],
    )
    equal("workItems", view["workItems"], [])
    equal("get_run", await s.view(run["id"], s.person1), view)


@check("processes.inputs", "spec §2.3; tools.md start_run", covers=("start_run/invalid",))
async def inputs(s: Session) -> None:
    """Inputs of every type are accepted as given; each wrong one is `invalid` with its own issue."""
    person = s.person2.value
    good = {**TYPED_GOOD, "p": person}
    view = await s.start("conform-typed", good)
    equal("data.inputs", view["data"]["inputs"], good)
    wrong = dict(TYPED_WRONG)
    if s.described["person"]["format"] == "email":
        wrong["p"] = "not an email"
    for name, value in wrong.items():
        error = await s.refused(
            s.agent, "start_run", "invalid", process="conform-typed", inputs={**good, name: value}
        )
        issues = error.get("issues") or []
        true(
            len(issues) == 1 and issues[0].startswith(f"inputs.{name}"),
            f"inputs.{name} = {value!r}: expected one issue on inputs.{name}, got {issues}",
        )
    error = await s.refused(
        s.agent, "start_run", "invalid", process="conform-typed", inputs={**good, **wrong}
    )
    equal("issues of every wrong input at once", len(error.get("issues") or []), len(wrong))
    for what, bad in (
        ("null for an optional input", {**good, "opt": None}),
        ("an undeclared input", {**good, "extra": 1}),
        ("a missing input", {k: v for k, v in good.items() if k != "s"}),
    ):
        error = await s.refused(s.agent, "start_run", "invalid", process="conform-typed", inputs=bad)
        equal(f"issues for {what}", len(error.get("issues") or []), 1)
    without = {k: v for k, v in good.items() if k != "opt"}
    equal(
        "inputs without the optional one",
        (await s.start("conform-typed", without))["data"]["inputs"],
        without,
    )


@check("processes.numbers", "spec §2.3 (a server MUST NOT round numbers)")
async def numbers(s: Session) -> None:
    big = 2**53 + 1
    huge = 10**30 + 7
    view = await s.start("conform-sign", {"amount": big})
    claimed = await s.claim(view["run"]["id"], "prepare")
    equal("claim data.inputs.amount", claimed["data"]["inputs"]["amount"], big)
    done = await s.submit(claimed["token"], {"amount": huge})
    recorded = done["data"]["steps"]["prepare"]["output"]["amount"]
    true(type(recorded) is int and recorded == huge, f"output.amount: expected {huge}, got {recorded!r}")
    again = await s.view(view["run"]["id"])
    equal(
        "inputs and output read again",
        (again["data"]["inputs"]["amount"], again["data"]["steps"]["prepare"]["output"]["amount"]),
        (big, huge),
    )
    for fraction in (0.1, 1.0000000000000002, 1e-300):
        started = await s.start("conform-sign", {"amount": fraction})
        equal(
            f"amount {fraction!r} read back",
            (await s.view(started["run"]["id"]))["data"]["inputs"]["amount"],
            fraction,
        )


@check("processes.initiator", "tools.md start_run; spec §3.4")
async def initiator(s: Session) -> None:
    """A process with a step for `initiator` cannot be started by an agent; a person starts it."""
    request = rid()
    inputs = {"ticket": "T-1", "owner": s.person1.value}
    await s.refused(
        s.agent, "start_run", "invalid", process="conform-desk", inputs=inputs, mode="test", requestId=request
    )
    view = await s.ok(
        s.person2, "start_run", process="conform-desk", inputs=inputs, mode="test", requestId=request
    )
    equal(
        "run started by a person after the agent was refused",
        (view["run"]["state"], view["run"]["startedBy"]),
        ("active", s.person2.value),
    )


@check("processes.anyone-starts", "spec §4.1 start_run (agent, person)")
async def anyone_starts(s: Session) -> None:
    """Any identity in the organization may start a run; a person's run names them."""
    for who in (s.person1, s.outsider, s.operator, s.agent2):
        view = await s.start("conform-chain", {"title": "Memo"}, who)
        equal(f"startedBy of a run {who.name} started", view["run"]["startedBy"], who.value)
        if not view["steps"] or view["steps"][0]["state"] != "ready":
            fail(f"first step after start: expected ready, got {view['steps'][:1]}")
    memo = await s.start("conform-memo", {"topic": "x"})
    equal("assignment of the first work item", work_item(memo, "write")["assignedTo"], {"group": s.group})
