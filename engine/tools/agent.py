"""The agent loop's writes (spec §3.3, §6 rule 2): claim, renew, submit, escalate, upload.

Tokens are opaque to callers: they name the run and step they were issued for, signed (`tools.leases`),
and the claim on the step keeps only their SHA-256. The result a `claim` or `renew` recorded for its
`requestId` keeps the token itself, because a replay must return the original result (tools.md
`claim`) and a hash cannot give it back; that record is encrypted (`tools.replays`), and such a token
works only until its lease ends or is renewed.
A token the server never issued is `invalid`; one it issued whose lease ended or was replaced is
`stale`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from engine.files import FileError
from engine.org import token_digest
from engine.runtime.machine import Machine
from engine.store.base import FileRecord
from engine.store.state import stamp
from engine.tools import checking
from engine.tools.acceptance import Submission, accept
from engine.tools.arguments import ClaimArgs, EscalateArgs, RenewArgs, SubmitArgs, UploadArgs
from engine.tools.context import Call, Context, open_run, save
from engine.tools.errors import ToolError, conflict, first_error, forbidden, invalid, not_found, run_ended
from engine.tools.leases import is_signed
from engine.tools.views import wire_time


def _agents_only(call: Call, tool: str) -> ToolError | None:
    return None if call.identity.is_agent else forbidden(f"{tool} is for agent identities")


async def claim(ctx: Context, call: Call, args: ClaimArgs) -> dict[str, Any]:
    m = await open_run(ctx, call, args.runId)
    step = next((s for s in m.process.steps if s.id == args.stepId), None)
    first_error(
        {
            "run_ended": lambda: run_ended() if m.run.is_over else None,
            "not_found": lambda: not_found(f"step '{args.stepId}'") if step is None else None,
            "forbidden": lambda: (
                _agents_only(call, "claim")
                or (
                    forbidden(f"step '{args.stepId}' is not an agent step")
                    if step is not None and step.kind != "agent"
                    else None
                )
            ),
        }
    )
    assert step is not None
    st = m.run.steps[step.id]
    if st.state == "claimed" and st.claim is not None:
        mine = st.claim.by == call.identity.id
        raise conflict("the step is claimed", "claimed_by_you" if mine else "claimed_by_other")
    if st.state != "ready":
        raise conflict("the step is not ready to claim", "not_ready")
    token = ctx.leases.issue(m.run.id, step.id)
    expires = m.claim(step.id, call.identity.id, token_digest(token), ctx.org.server.lease_seconds)
    await save(call, m)
    return ctx.views.claim_result(m.run, m.process, step, token, expires)


def _unverified() -> ToolError:
    return invalid("the token does not verify", ["token: not valid"])


async def _held(ctx: Context, call: Call, token: str, tool: str) -> tuple[Machine, str]:
    """The run and step a token was issued for, with the checks every token-bearing tool makes."""
    digest = token_digest(token)
    # A token issued before signed tokens is looked up where it was indexed when issued.
    owner = ctx.leases.holder(token) if is_signed(token) else await call.writes.token_owner(digest)
    if owner is None:
        raise _unverified()
    try:
        m = await open_run(ctx, call, owner[0])
    except ToolError as error:
        if error.code != "not_found":
            raise
        # Signed for a run this database does not hold: another organization's on a shared secrets
        # file, or one restored from before the claim.
        raise _unverified() from None
    st = m.run.steps.get(owner[1])
    if st is None:
        raise _unverified()
    live = st.state == "claimed" and st.claim is not None and st.claim.token_hash == digest
    first_error(
        {
            "run_ended": lambda: run_ended() if m.run.is_over else None,
            "stale": lambda: (
                None if live else ToolError("stale", "the lease ended or the claim was replaced")
            ),
            "forbidden": lambda: (
                _agents_only(call, tool)
                or (
                    forbidden("the claim belongs to another agent")
                    if st.claim is not None and st.claim.by != call.identity.id
                    else None
                )
            ),
        }
    )
    return m, owner[1]


async def renew(ctx: Context, call: Call, args: RenewArgs) -> dict[str, Any]:
    m, step_id = await _held(ctx, call, args.token, "renew")
    token = ctx.leases.issue(m.run.id, step_id)
    expires = m.renew(step_id, token_digest(token), ctx.org.server.lease_seconds, args.progress)
    await save(call, m, touch=False)
    return {"token": token, "expiresAt": wire_time(expires)}


async def submit(ctx: Context, call: Call, args: SubmitArgs) -> dict[str, Any]:
    m, step_id = await _held(ctx, call, args.token, "submit")
    step = m.process.step(step_id)
    sub = Submission(args.output, args.evidence, args.summary, args.next, args.reason, summary_required=True)
    issues, fields = await accept(
        ctx.files, m.run, step, sub, call.identity.id, m.at, ctx.org.server.run_data_bytes
    )
    if issues:
        m.refuse(step_id, issues)
        await save(call, m, touch=False)
        raise ToolError("not_accepted", "the submission was not accepted", issues, keep=True)
    key = ("submit", m.run.id, step_id, token_digest(args.token))

    def accepted() -> None:
        m.log("submitted", step_id, by=call.identity.id, note=args.summary, **submitted(fields, args.next))

    await checking.finish(call, m, step, fields, args.next, key, accepted)
    await save(call, m)
    return ctx.views.run_view(m.run, m.process)


def submitted(fields: dict[str, Any], chosen: str | None) -> dict[str, Any]:
    """What a log entry says of an accepted submission: its shape, not its values (run data has them)."""
    output = fields.get("output")
    return {
        "outputFields": sorted(output) if isinstance(output, dict) else [],
        "evidence": len(fields.get("evidence", [])),
        "next": chosen,
    }


async def escalate(ctx: Context, call: Call, args: EscalateArgs) -> dict[str, Any]:
    m, step_id = await _held(ctx, call, args.token, "escalate")
    if not args.note.strip():
        raise invalid("an escalation needs a note", ["note: required"])
    m.escalate(step_id, call.identity.id, args.note)
    await save(call, m)
    return ctx.views.run_view(m.run, m.process)


async def upload(ctx: Context, call: Call, args: UploadArgs) -> dict[str, Any]:
    try:
        content = ctx.files.decode(args.contentBase64, ctx.org.server.max_upload_bytes)
    except FileError as exc:
        raise invalid("the upload was refused", [str(exc)]) from None
    sha256 = await asyncio.to_thread(ctx.files.write, content)
    record = FileRecord(
        ctx.ids("f"), sha256, len(content), args.fileName, args.contentType, call.identity.id, stamp(call.now)
    )
    await call.writes.insert_file(record)
    return {"id": record.id, "sha256": sha256, "bytes": len(content)}
