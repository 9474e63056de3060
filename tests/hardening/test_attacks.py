"""The attack table: requests an attacker (or a confused client) sends to `apc serve`, each refused as
stated, and none of them changing anything (the database and the uploaded files are byte for byte
what they were before the request).

Rows cover authentication (bearer tokens, JWTs forged every way), authorization (every identity
trying what it may not), file URLs (signatures, expiry, paths) and protocol abuse (methods, media
types, sizes, hosts, origins, malformed JSON-RPC, numbers, cursors). The server runs as a real process
with an `[oauth]` table; its log must show no traceback and no ERROR line afterwards.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from engine.keys import SECRETS_FILE, load_keys
from tests.hardening.serve_support import (
    AGENTS,
    HASHED_AGENT,
    OPERATOR,
    OUTSIDER,
    REVIEWERS,
    Served,
    start_serve,
    write_config,
)
from tests.support.rpc import ACCEPT, tool_call

ISSUER = "https://id.example.com"
AUDIENCE = "apc"
KID = "key-1"
A_ONE, A_TWO = list(AGENTS.values())[:2]
RITA = next(iter(REVIEWERS.values()))
OPS = OPERATOR[1]
NOBODY = OUTSIDER[1]
MCP_HEADERS = {**ACCEPT, "Content-Type": "application/json"}


@dataclass
class Setup:
    """The running server and what the table aims at: a claimed step, a pending approval, a file."""

    served: Served
    data: Path
    keys: tuple[rsa.RSAPrivateKey, rsa.RSAPrivateKey]
    claimed_run: str = ""
    lease: str = ""
    review_run: str = ""
    item: dict[str, Any] = field(default_factory=dict)
    file_id: str = ""
    recorded: dict[str, Any] = field(default_factory=dict)
    """A write that was recorded: its caller's token, tool and arguments."""

    def url(self, path: str) -> str:
        return self.served.base + path

    def jwt(self, key: int = 0, headers: dict[str, Any] | None = None, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + 300, "email": next(iter(REVIEWERS))}
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(body, self.keys[key], algorithm="RS256", headers={"kid": KID, **(headers or {})})

    def signed(self, file_id: str, expires: int) -> str:
        key = load_keys(self.data / SECRETS_FILE)[0].file_url
        mac = hmac.new(key, f"{file_id}:{expires}".encode(), hashlib.sha256).digest()
        sig = base64.urlsafe_b64encode(mac).decode().rstrip("=")
        return f"/files/{file_id}?expires={expires}&sig={sig}"


def rpc_body(tool: str, arguments: Any) -> bytes:
    return json.dumps(tool_call(tool, arguments)).encode()


def call(setup: Setup, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(
        setup.url("/mcp"),
        content=rpc_body(tool, arguments),
        headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 200, response.text
    envelope: dict[str, Any] = response.json()["result"]["structuredContent"]
    return envelope


def data_of(envelope: dict[str, Any]) -> Any:
    assert envelope["ok"], envelope
    return envelope["data"]


def prepare(setup: Setup) -> None:
    rid = iter(f"setup-{n}" for n in range(100))
    start = {"process": "crash-flow", "inputs": {"ticket": "T-1"}}
    setup.claimed_run = data_of(call(setup, RITA, "start_run", {**start, "requestId": next(rid)}))["run"][
        "id"
    ]
    claim = {"runId": setup.claimed_run, "stepId": "draft", "requestId": next(rid)}
    setup.lease = data_of(call(setup, A_ONE, "claim", claim))["token"]
    setup.recorded = {"token": A_ONE, "tool": "claim", "arguments": claim}
    setup.review_run = data_of(call(setup, RITA, "start_run", {**start, "requestId": next(rid)}))["run"]["id"]
    for step in ("draft", "check"):
        claimed = data_of(
            call(setup, A_ONE, "claim", {"runId": setup.review_run, "stepId": step, "requestId": next(rid)})
        )
        done = {"token": claimed["token"], "output": {"note": step}, "summary": "s", "requestId": next(rid)}
        data_of(call(setup, A_ONE, "submit", done))
    [item] = data_of(call(setup, RITA, "get_work", {}))["items"]
    setup.item = item["workItem"]
    upload = {
        "fileName": "r.txt",
        "contentType": "text/plain",
        "contentBase64": "cmVwb3J0",
        "requestId": next(rid),
    }
    setup.file_id = data_of(call(setup, A_ONE, "upload", upload))["id"]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("attacks")
    keys = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048),
        rsa.generate_private_key(public_exponent=65537, key_size=2048),
    )
    public = RSAAlgorithm.to_jwk(keys[0].public_key(), as_dict=True)
    (root / "jwks.json").write_text(
        json.dumps({"keys": [{**public, "kid": KID, "use": "sig", "alg": "RS256"}]})
    )
    oauth = {"issuer": ISSUER, "audience": AUDIENCE, "jwks_file": "jwks.json", "agent_claim": "agent_id"}
    config = write_config(root, oauth=oauth)
    served = start_serve(config, root / "data", root / "serve.log")
    try:
        ready = Setup(served, root / "data", keys)
        prepare(ready)
        yield ready
    finally:
        assert served.stop() == 0
        log = (root / "serve.log").read_text()
        assert "Traceback" not in log and " ERROR " not in log, log


def state(setup: Setup) -> tuple[list[str], list[tuple[str, bytes]]]:
    """Every row of the database and every stored file: what must not change."""
    db = sqlite3.connect(f"{(setup.data / 'engine.db').as_uri()}?mode=ro", uri=True)
    try:
        rows = list(db.iterdump())
    finally:
        db.close()
    files = sorted(
        (str(p.relative_to(setup.data)), p.read_bytes())
        for p in (setup.data / "files").rglob("*")
        if p.is_file()
    )
    return rows, files


Request = Callable[[Setup], httpx.Response]


def post(
    body: Callable[[Setup], bytes],
    token: Callable[[Setup], str | None] = lambda s: A_ONE,
    headers: dict[str, str] | None = None,
) -> Request:
    def send(setup: Setup) -> httpx.Response:
        sent = {**MCP_HEADERS, **(headers or {})}
        bearer = token(setup)
        if bearer is not None:
            sent.setdefault("Authorization", f"Bearer {bearer}")
        return httpx.post(
            setup.url("/mcp"), content=body(setup), headers={k: v for k, v in sent.items() if v}
        )

    return send


def tool(
    name: str, arguments: Callable[[Setup], Any], token: Callable[[Setup], str | None] = lambda s: A_ONE
) -> Request:
    return post(lambda s: rpc_body(name, arguments(s)), token)


def get(path: Callable[[Setup], str], method: str = "GET") -> Request:
    return lambda setup: httpx.request(method, setup.url(path(setup)))


DESCRIBE = lambda s: rpc_body("describe", {})  # noqa: E731


def decide_as(token: Callable[[Setup], str], **changes: Any) -> Request:
    def arguments(s: Setup) -> dict[str, Any]:
        return {
            **s.item["decide"]["arguments"],
            "requestId": "attack-decide",
            "decision": "approved",
            **changes,
        }

    return tool("decide", arguments, token)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def hs256_with_the_public_key(s: Setup) -> str:
    """The classic key confusion: an HMAC token keyed with the issuer's public key."""
    head = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": KID}).encode())
    signed = f"{head}.{s.jwt().split('.')[1]}"
    pem = (
        s.keys[0]
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return f"{signed}.{_b64(hmac.new(pem, signed.encode(), hashlib.sha256).digest())}"


def payload_swapped(s: Setup) -> str:
    """A genuine token's header and signature around a payload naming the operator."""
    head, _, sig = s.jwt().split(".")
    claims = {"iss": ISSUER, "aud": AUDIENCE, "exp": int(time.time()) + 60, "email": OPERATOR[0]}
    return f"{head}.{_b64(json.dumps(claims).encode())}.{sig}"


def alg_none(s: Setup) -> str:
    """An unsigned token: `alg: none` and an empty signature."""
    claims = {"iss": ISSUER, "aud": AUDIENCE, "exp": int(time.time()) + 60, "email": next(iter(REVIEWERS))}
    head = _b64(json.dumps({"alg": "none", "typ": "JWT", "kid": KID}).encode())
    return f"{head}.{_b64(json.dumps(claims).encode())}."


def send_number(text: str, request_id: str) -> Request:
    """An event whose data holds a number written exactly as `text`."""

    def body(s: Setup) -> bytes:
        arguments = {"runId": s.claimed_run, "name": "go", "data": {"n": 1}, "requestId": request_id}
        return rpc_body("send_event", arguments).replace(b'"n": 1', b'"n": ' + text.encode())

    return post(body, lambda s: OPS)


@dataclass(frozen=True)
class Row:
    name: str
    request: Request
    status: int
    code: str | None = None
    issues: list[str] | None = None


ROWS = [
    # authentication
    Row("no credentials", post(DESCRIBE, lambda s: None), 401),
    Row("empty bearer", post(DESCRIBE, lambda s: None, {"Authorization": "Bearer"}), 401),
    Row("basic auth", post(DESCRIBE, lambda s: None, {"Authorization": "Basic YTpi"}), 401),
    Row("unknown token", post(DESCRIBE, lambda s: "tok-not-issued-0000"), 401),
    Row("token with a suffix", post(DESCRIBE, lambda s: A_ONE + "x"), 401),
    Row(
        "a config digest as the token",
        post(DESCRIBE, lambda s: hashlib.sha256(HASHED_AGENT[1].encode()).hexdigest()),
        401,
    ),
    Row("token in the query", get(lambda s: f"/mcp?access_token={A_ONE}", "POST"), 401),
    Row("jwt expired", post(DESCRIBE, lambda s: s.jwt(exp=int(time.time()) - 3600)), 401),
    Row("jwt other issuer", post(DESCRIBE, lambda s: s.jwt(iss="https://evil.example.com")), 401),
    Row("jwt other audience", post(DESCRIBE, lambda s: s.jwt(aud="other")), 401),
    Row("jwt no audience", post(DESCRIBE, lambda s: s.jwt(aud=None)), 401),
    Row("jwt no expiry", post(DESCRIBE, lambda s: s.jwt(exp=None)), 401),
    Row("jwt not yet valid", post(DESCRIBE, lambda s: s.jwt(nbf=int(time.time()) + 3600)), 401),
    Row("jwt signed by a stranger", post(DESCRIBE, lambda s: s.jwt(key=1)), 401),
    Row("jwt unknown key id", post(DESCRIBE, lambda s: s.jwt(headers={"kid": "other"})), 401),
    Row("jwt alg none", post(DESCRIBE, alg_none), 401),
    Row("jwt HS256 keyed with the public key", post(DESCRIBE, hs256_with_the_public_key), 401),
    Row("jwt with its payload swapped", post(DESCRIBE, payload_swapped), 401),
    Row(
        "jwt for a person the org does not know",
        post(DESCRIBE, lambda s: s.jwt(email="mallory@example.com")),
        401,
    ),
    Row(
        "jwt for an agent the org does not know",
        post(DESCRIBE, lambda s: s.jwt(email=None, agent_id="a_mallory")),
        401,
    ),
    # authorization
    Row("an agent decides", decide_as(lambda s: A_ONE), 200, "forbidden"),
    Row("a person outside the group decides", decide_as(lambda s: NOBODY), 200, "forbidden"),
    Row("an operator decides another group's item", decide_as(lambda s: OPS), 200, "forbidden"),
    Row(
        "a jwt person outside the group decides",
        decide_as(lambda s: s.jwt(email=OUTSIDER[0])),
        200,
        "forbidden",
    ),
    Row("a decision on a stale snapshot", decide_as(lambda s: RITA, snapshot="0" * 32), 200, "stale"),
    Row("a decision on an unknown item", decide_as(lambda s: RITA, workItemId="w_forged"), 200, "not_found"),
    Row(
        "a person claims",
        tool(
            "claim", lambda s: {"runId": s.review_run, "stepId": "draft", "requestId": "a1"}, lambda s: RITA
        ),
        200,
        "forbidden",
    ),
    Row(
        "a person cancels",
        tool("cancel", lambda s: {"runId": s.claimed_run, "reason": "x", "requestId": "a2"}, lambda s: RITA),
        200,
        "forbidden",
    ),
    Row(
        "an agent cancels",
        tool("cancel", lambda s: {"runId": s.claimed_run, "reason": "x", "requestId": "a3"}),
        200,
        "forbidden",
    ),
    Row(
        "a person sends an event",
        tool(
            "send_event", lambda s: {"runId": s.claimed_run, "name": "go", "requestId": "a4"}, lambda s: RITA
        ),
        200,
        "forbidden",
    ),
    Row(
        "another agent submits with the lease",
        tool(
            "submit",
            lambda s: {"token": s.lease, "output": {"note": "x"}, "summary": "s", "requestId": "a5"},
            lambda s: A_TWO,
        ),
        200,
        "forbidden",
    ),
    Row(
        "another agent renews the lease",
        tool("renew", lambda s: {"token": s.lease, "requestId": "a6"}, lambda s: A_TWO),
        200,
        "forbidden",
    ),
    Row(
        "another agent escalates the lease",
        tool("escalate", lambda s: {"token": s.lease, "note": "n", "requestId": "a7"}, lambda s: A_TWO),
        200,
        "forbidden",
    ),
    Row(
        "a jwt agent uses another's lease",
        tool(
            "renew",
            lambda s: {"token": s.lease, "requestId": "a8"},
            lambda s: s.jwt(email=None, agent_id=list(AGENTS)[1]),
        ),
        200,
        "forbidden",
    ),
    Row(
        "a forged lease token",
        tool("submit", lambda s: {"token": "forged", "output": {}, "summary": "s", "requestId": "a9"}),
        200,
        "invalid",
        ["token: not valid"],
    ),
    Row(
        "a claim of a claimed step",
        tool(
            "claim",
            lambda s: {"runId": s.claimed_run, "stepId": "draft", "requestId": "a10"},
            lambda s: A_TWO,
        ),
        200,
        "conflict",
        ["claimed_by_other"],
    ),
    Row(
        "a recorded requestId by another caller",
        tool("claim", lambda s: s.recorded["arguments"], lambda s: A_TWO),
        200,
        "conflict",
        ["requestId: already used"],
    ),
    Row(
        "a recorded requestId with other arguments",
        tool("claim", lambda s: {**s.recorded["arguments"], "stepId": "check"}),
        200,
        "conflict",
        ["requestId: already used"],
    ),
    Row("an unknown run", tool("get_run", lambda s: {"runId": "r_forged"}), 200, "not_found"),
    Row(
        "an unknown process",
        tool("start_run", lambda s: {"process": "nope", "inputs": {}, "requestId": "a11"}),
        200,
        "not_found",
    ),
    # file URLs
    Row("a tampered signature", get(lambda s: s.signed(s.file_id, int(time.time()) + 600)[:-2] + "AA"), 403),
    Row("an expired link", get(lambda s: s.signed(s.file_id, int(time.time()) - 1)), 403),
    Row(
        "a later expiry with the signature of another",
        get(lambda s: s.signed(s.file_id, int(time.time()) + 600).replace("expires=", "expires=9")),
        403,
    ),
    Row(
        "another file with a valid signature",
        get(lambda s: s.signed(s.file_id, int(time.time()) + 600).replace(s.file_id, "f_other", 1)),
        403,
    ),
    Row("no signature", get(lambda s: f"/files/{s.file_id}?expires={int(time.time()) + 600}"), 403),
    Row(
        "no expiry", get(lambda s: s.signed(s.file_id, int(time.time()) + 600).split("?")[0] + "?sig=x"), 403
    ),
    Row("an expiry that is not a number", get(lambda s: f"/files/{s.file_id}?expires=soon&sig=x"), 403),
    Row("a huge expiry", get(lambda s: f"/files/{s.file_id}?expires={'9' * 40}&sig=x"), 403),
    Row(
        "a signed link to a file never uploaded",
        get(lambda s: s.signed("f_none", int(time.time()) + 600)),
        404,
    ),
    Row("a path out of the files folder", get(lambda s: "/files/..%2F..%2Fengine.db?expires=1&sig=x"), 404),
    Row("a dot-dot path", get(lambda s: "/files/../engine.db"), 404),
    Row("the files folder itself", get(lambda s: "/files/"), 404),
    Row("a POST to a file link", get(lambda s: s.signed(s.file_id, int(time.time()) + 600), "POST"), 405),
    Row(
        "a bearer token instead of a signature",
        lambda s: httpx.get(s.url(f"/files/{s.file_id}"), headers={"Authorization": f"Bearer {A_ONE}"}),
        403,
    ),
    Row("the database by name", get(lambda s: "/engine.db"), 404),
    Row("the secrets file by name", get(lambda s: "/secrets.key"), 404),
    # protocol abuse
    Row(
        "GET on the endpoint",
        lambda s: httpx.get(
            s.url("/mcp"), headers={"Authorization": f"Bearer {A_ONE}", "Accept": "text/event-stream"}
        ),
        405,
    ),
    Row(
        "DELETE on the endpoint",
        lambda s: httpx.delete(s.url("/mcp"), headers={"Authorization": f"Bearer {A_ONE}"}),
        405,
    ),
    Row("not JSON", post(lambda s: b"{not json"), 400),
    Row("a JSON-RPC batch", post(lambda s: b"[" + rpc_body("describe", {}) + b"]"), 400),
    Row("a text/plain body", post(DESCRIBE, headers={"Content-Type": "text/plain"}), 400),
    Row("an Accept header without JSON", post(DESCRIBE, headers={"Accept": "text/html"}), 406),
    Row("a body over the size limit", post(lambda s: b" " * (16 * 1024 * 1024)), 413),
    Row("nesting a hundred thousand deep", post(lambda s: b"[" * 100_000 + b"]" * 100_000), 400),
    Row(
        "a lone surrogate escape",
        post(lambda s: rpc_body("get_run", {"runId": "x"}).replace(b'"x"', b'"\\ud800"')),
        400,
    ),
    Row("a foreign Host", post(DESCRIBE, headers={"Host": "evil.example.com"}), 421),
    Row("a foreign Origin", post(DESCRIBE, headers={"Origin": "https://evil.example.com"}), 403),
    Row("an unknown tool", tool("drop_tables", lambda s: {}), 200, "invalid"),
    Row(
        "arguments that are a list",
        tool("get_run", lambda s: ["r_1"]),
        200,
        "jsonrpc",
    ),
    Row("NaN", send_number("NaN", "a12"), 200, "invalid", ["data.n: NaN is not a finite number"]),
    Row("1e309", send_number("1e309", "a13"), 200, "invalid", ["data.n: 1e309 is not a finite number"]),
    Row(
        "a number a float would round",
        send_number("1.00000000000000000001", "a14"),
        200,
        "invalid",
        ["data.n: 1.00000000000000000001 cannot be kept exactly (a 64-bit float would round it)"],
    ),
    Row(
        "a forged cursor",
        tool("list_runs", lambda s: {"cursor": base64.urlsafe_b64encode(b"[9223372036854775808]").decode()}),
        200,
        "invalid",
        ["cursor: not valid"],
    ),
    Row(
        "a requestId too long",
        tool(
            "cancel", lambda s: {"runId": s.claimed_run, "reason": "x", "requestId": "x" * 129}, lambda s: OPS
        ),
        200,
        "invalid",
        ["requestId: at most 128 characters"],
    ),
    Row(
        "an upload over the limit",
        tool(
            "upload",
            lambda s: {
                "fileName": "big",
                "contentType": "text/plain",
                "contentBase64": base64.b64encode(b"x" * (10 * 1024 * 1024 + 1)).decode(),
                "requestId": "a15",
            },
        ),
        200,
        "invalid",
        ["contentBase64: larger than maxUploadBytes (10485760)"],
    ),
    Row(
        "an unknown JSON-RPC method",
        post(lambda s: json.dumps({"jsonrpc": "2.0", "id": 1, "method": "admin/drop"}).encode()),
        200,
        "jsonrpc",
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_each_attack_is_refused_and_changes_nothing(setup: Setup, row: Row) -> None:
    before = state(setup)
    response = row.request(setup)
    assert response.status_code == row.status, (row.name, response.status_code, response.text[:300])
    if row.code == "jsonrpc":
        assert set(response.json()) == {"jsonrpc", "id", "error"}, response.json()
    elif row.code is not None:
        envelope = response.json()["result"]["structuredContent"]
        assert envelope["ok"] is False and envelope["error"]["code"] == row.code, envelope
        assert json.loads(response.json()["result"]["content"][0]["text"]) == envelope
        if row.issues is not None:
            assert envelope["error"]["issues"] == row.issues
    assert state(setup) == before


def test_the_table_aims_at_live_targets(setup: Setup) -> None:
    """The controls: the same requests done right succeed, so each refusal is the attack's doing."""
    assert httpx.get(setup.url(setup.signed(setup.file_id, int(time.time()) + 600))).content == b"report"
    assert call(setup, HASHED_AGENT[1], "describe", {})["ok"] is True
    assert call(setup, setup.jwt(), "describe", {})["ok"] is True
    assert call(setup, setup.jwt(email=None, agent_id=list(AGENTS)[1]), "describe", {})["ok"] is True
    renewed = call(setup, A_ONE, "get_run", {"runId": setup.claimed_run})
    assert [s["state"] for s in renewed["data"]["steps"]][:1] == ["claimed"]
    assert setup.item["decide"]["decisions"] == ["approved", "rejected", "failed"]


def test_no_credential_reaches_the_data_folder_or_the_log(setup: Setup) -> None:
    """Bearer tokens, JWTs and lease tokens are kept nowhere a copy of the data folder or the log
    would hand them out: config tokens only as digests, lease tokens as digests and encrypted replays."""
    person_jwt, agent_jwt = setup.jwt(), setup.jwt(email=None, agent_id=list(AGENTS)[2])
    start = {"process": "crash-flow", "inputs": {"ticket": "T-leak"}, "requestId": "leak-start"}
    run_id = data_of(call(setup, person_jwt, "start_run", start))["run"]["id"]
    claim = {"runId": run_id, "stepId": "draft", "requestId": "leak-claim"}
    lease = data_of(call(setup, agent_jwt, "claim", claim))["token"]
    renewed = data_of(call(setup, agent_jwt, "renew", {"token": lease, "requestId": "leak-renew"}))["token"]
    assert call(setup, agent_jwt, "claim", claim)["data"]["token"] == lease
    data_of(call(setup, HASHED_AGENT[1], "get_work", {}))
    secrets = [
        *AGENTS.values(),
        *REVIEWERS.values(),
        OUTSIDER[1],
        OPERATOR[1],
        HASHED_AGENT[1],
        person_jwt,
        agent_jwt,
        lease,
        renewed,
        setup.lease,
    ]
    stored = [(str(p), p.read_bytes()) for p in sorted(setup.data.rglob("*")) if p.is_file()]
    log = setup.served.log.read_bytes()
    assert len(stored) >= 3 and b" renew ok " in log
    leaks = [
        (where, secret[:12])
        for secret in secrets
        for where, content in [*stored, ("log", log)]
        if secret.encode() in content
    ]
    assert leaks == []
