"""The `[check]` table of the org config: one loader for the file, the evaluator Engine.open builds,
and a clear error, with its line, for everything that can be wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.clock import ManualClock
from engine.core import Engine
from engine.evaluator.config import CheckConfig, CheckLimits, OpenAISettings
from engine.evaluator.openai import OpenAIEvaluator
from engine.org import ConfigError, OAuthConfig, OrgConfig
from tests.engine.engine_support import SCREENER, call, err, ok
from tests.engine.evaluator.engine_check_support import YES_NO, publish_vendor_check, screening, submit

ORG = """
[[groups]]
id = "g_finance"
members = ["mira@example.com"]

[[people]]
email = "mira@example.com"
token = "tok-mira-0001"

[[agents]]
id = "a_screener"
token = "tok-screener1"
"""
SCRIPTED = """
[check]
evaluator = "scripted"
answers = "judge/answers.toml"
pass = 0.85
state_bytes = 32768
"""
OAUTH = """
[oauth]
issuer = "https://id.example.com"
audience = "https://agents.example.com/mcp"
jwks_file = "keys/jwks.json"
"""
ANSWERS = f"""
[[answer]]
process = "vendor-check"
step = "check_vendor"
ask = "{YES_NO}"
yes = 0.1
"""


def write(tmp_path: Path, text: str, answers: str | None = ANSWERS) -> Path:
    if answers is not None:
        (tmp_path / "judge").mkdir(exist_ok=True)
        (tmp_path / "judge" / "answers.toml").write_text(answers)
    path = tmp_path / "org.toml"
    path.write_text(text)
    return path


def test_one_loader_reads_the_check_and_oauth_tables(tmp_path: Path) -> None:
    path = write(tmp_path, ORG + SCRIPTED + OAUTH)
    org = OrgConfig.load(path)
    assert org.check == CheckConfig(
        "scripted",
        answers=tmp_path / "judge" / "answers.toml",
        limits=CheckLimits(pass_at=0.85, state_bytes=32768),
    )
    assert org.oauth == OAuthConfig(
        issuer="https://id.example.com",
        audience="https://agents.example.com/mcp",
        jwks_file=(tmp_path / "keys" / "jwks.json").resolve(),
    )


def test_an_org_without_the_tables_has_no_evaluator_and_default_limits(tmp_path: Path) -> None:
    org = OrgConfig.load(write(tmp_path, ORG, answers=None))
    assert (org.check, org.oauth) == (CheckConfig(), None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[check]\nevaluator = "claude"\n', "line 2: check.evaluator: must be 'openai' or 'scripted', got 'claude'"),
        ('[check]\npass = 0.6\nfail = 0.7\n', "line 3: check.fail: 0.7 is above check.pass 0.6"),
        ("[check]\ncolour = 1\n", "line 2: check.colour: unknown key"),
        ('[check]\nevaluator = "openai"\nmodel = "m"\n', "check.base_url: required when check.evaluator is 'openai'"),
        ("check = 3\n", "check: expected a table ([check])"),
    ],
)  # fmt: skip
def test_a_bad_check_table_names_the_file_the_line_and_the_key(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text, answers=None)
    with pytest.raises(ConfigError) as caught:
        OrgConfig.load(path)
    assert str(caught.value) == f"{path}: {message}"


async def test_engine_open_builds_the_scripted_evaluator_the_org_names(tmp_path: Path) -> None:
    org = OrgConfig.load(write(tmp_path, ORG + SCRIPTED))
    engine = await Engine.open(tmp_path / "data", org, clock=ManualClock())
    try:
        assert engine.profiles == ("parallel-1", "check-1")
        limits = ok(await call(engine, SCREENER, "describe"), "describe")["limits"]
        assert (limits["checkPass"], limits["checkStateBytes"]) == (0.85, 32768)
        await publish_vendor_check(engine)
        screen = await screening(engine)
        refused = err(await submit(engine, screen), "not_accepted", [f"check: {YES_NO} → no (0.1)"])
        assert refused["message"] == "the check did not pass"
        claim_view = ok(await call(engine, SCREENER, "get_run", runId=screen.run_id), "get_run")
        assert claim_view["data"]["steps"] == {}
    finally:
        await engine.close()


async def test_engine_open_builds_the_openai_evaluator_with_the_key_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APC_JUDGE_KEY", "sk-local")
    table = '[check]\nevaluator = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "small-judge"\n'
    org = OrgConfig.load(
        write(tmp_path, ORG + table + 'api_key_env = "APC_JUDGE_KEY"\ntimeout_seconds = 4\n')
    )
    assert org.check.openai == OpenAISettings(
        "http://127.0.0.1:9/v1", "small-judge", None, "APC_JUDGE_KEY", 4.0
    )
    engine = await Engine.open(tmp_path / "data", org, clock=ManualClock())
    try:
        assert isinstance(engine.evaluator, OpenAIEvaluator)
        assert engine.evaluator.model == "small-judge"
    finally:
        await engine.close()


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        (None, "check.answers: cannot read {answers}: No such file or directory"),
        ("[[answer]]\nprocess = 'p'\n", "answers.toml: answer[0].step: required, a non-empty string"),
    ],
)
async def test_an_evaluator_that_cannot_be_built_is_a_config_error_at_open(
    tmp_path: Path, answers: str | None, message: str
) -> None:
    org = OrgConfig.load(write(tmp_path, ORG + SCRIPTED, answers=answers))
    with pytest.raises(ConfigError) as caught:
        await Engine.open(tmp_path / "data", org, clock=ManualClock())
    assert str(caught.value) == message.format(answers=tmp_path / "judge" / "answers.toml")
    assert not (tmp_path / "data").exists()


async def test_a_missing_key_variable_is_a_config_error_at_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("APC_JUDGE_KEY", raising=False)
    table = '[check]\nevaluator = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\napi_key_env = "APC_JUDGE_KEY"\n'
    org = OrgConfig.load(write(tmp_path, ORG + table, answers=None))
    with pytest.raises(ConfigError) as caught:
        await Engine.open(tmp_path / "data", org, clock=ManualClock())
    assert str(caught.value) == "check.api_key_env: environment variable APC_JUDGE_KEY is not set"


def test_build_takes_a_check_config_for_orgs_in_code(tmp_path: Path) -> None:
    config = CheckConfig("scripted", answers=tmp_path / "answers.toml")
    org = OrgConfig.build(agents={"a_screener": "tok-screener1"}, check=config)
    assert org.check is config
