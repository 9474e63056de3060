"""The `[check]` table of the org config, the limits `describe` reports, and building the evaluator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.evaluator.base import CheckConfigError
from engine.evaluator.config import (
    CheckConfig,
    CheckLimits,
    OpenAISettings,
    build_evaluator,
    parse_check_config,
)
from engine.evaluator.scripted import ScriptedEvaluator
from tests.engine.evaluator.evaluator_support import errors

CONFIG = Path("/etc/apc/org.toml")
OPENAI = {"evaluator": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "small-judge"}


def test_no_table_means_no_evaluator_and_default_limits() -> None:
    config = parse_check_config(None, CONFIG)
    assert config == CheckConfig(None, None, None, CheckLimits(0.9, None, 0.8, 65536))
    assert build_evaluator(config) is None


def test_a_table_without_evaluator_sets_limits_only() -> None:
    config = parse_check_config({"pass": 0.95, "fail": 0.4, "confidence": 0.7, "state_bytes": 4096}, CONFIG)
    assert config == CheckConfig(limits=CheckLimits(0.95, 0.4, 0.7, 4096))
    assert build_evaluator(config) is None


def test_limits_wire_is_the_check_part_of_describe_limits() -> None:
    wire = CheckLimits(0.95, 0.4, 0.7, 4096).wire()
    assert wire == {"checkPass": 0.95, "checkFail": 0.4, "checkConfidence": 0.7, "checkStateBytes": 4096}
    place = "tools/describe.result.json#/properties/limits"
    assert errors(place, {"runDataBytes": 1048576, **wire}) == []
    assert errors(place, {"runDataBytes": 1048576, **CheckLimits().wire()}) == []


def test_openai() -> None:
    config = parse_check_config({**OPENAI, "api_key_env": "JUDGE_KEY", "timeout_seconds": 5}, CONFIG)
    assert config == CheckConfig(
        "openai",
        OpenAISettings("http://127.0.0.1:9/v1", "small-judge", None, "JUDGE_KEY", 5.0),
        None,
        CheckLimits(),
    )


def test_a_missing_key_variable_is_an_error_at_start() -> None:
    config = parse_check_config({**OPENAI, "api_key_env": "JUDGE_KEY"}, CONFIG)
    with pytest.raises(CheckConfigError) as raised:
        build_evaluator(config, env={})
    assert str(raised.value) == "check.api_key_env: environment variable JUDGE_KEY is not set"


def test_scripted_answers_are_found_beside_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "answers.toml").write_text("default_yes = 0.5\n", encoding="utf-8")
    config = parse_check_config({"evaluator": "scripted", "answers": "answers.toml"}, tmp_path / "org.toml")
    assert config == CheckConfig("scripted", None, tmp_path / "answers.toml", CheckLimits())
    evaluator = build_evaluator(config)
    assert isinstance(evaluator, ScriptedEvaluator)
    assert evaluator.model == "scripted:answers.toml"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"evaluator": "openai", "model": "m", "base_url": "u", "colour": 1}, "check.colour: unknown key"),
        ({"evaluator": "claude"}, "check.evaluator: must be 'openai' or 'scripted', got 'claude'"),
        ({"evaluator": "openai", "model": "m"}, "check.base_url: required when check.evaluator is 'openai'"),
        ({"evaluator": "openai", "base_url": "u"}, "check.model: required when check.evaluator is 'openai'"),
        (
            {"evaluator": "openai", "base_url": "u", "model": ""},
            "check.model: must be a non-empty string, got ''",
        ),
        ({**OPENAI, "timeout_seconds": 0}, "check.timeout_seconds: must be a positive number, got 0"),
        (
            {**OPENAI, "api_key": "k", "api_key_env": "K"},
            "check.api_key: give either check.api_key or check.api_key_env, not both",
        ),
        ({**OPENAI, "answers": "a.toml"}, "check.answers: not used with check.evaluator = 'openai'"),
        ({"evaluator": "scripted"}, "check.answers: required when check.evaluator is 'scripted'"),
        (
            {"evaluator": "scripted", "answers": "a.toml", "model": "m"},
            "check.model: not used with check.evaluator = 'scripted'",
        ),
        ({"base_url": "u"}, "check.base_url: not used without check.evaluator"),
        ({"pass": 1.2}, "check.pass: must be a number from 0 to 1, got 1.2"),
        ({"pass": True}, "check.pass: must be a number from 0 to 1, got True"),
        ({"fail": -0.1}, "check.fail: must be a number from 0 to 1, got -0.1"),
        ({"pass": 0.6, "fail": 0.7}, "check.fail: 0.7 is above check.pass 0.6"),
        ({"confidence": "high"}, "check.confidence: must be a number from 0 to 1, got 'high'"),
        ({"state_bytes": 0}, "check.state_bytes: must be a positive whole number, got 0"),
        ({"state_bytes": 1.5}, "check.state_bytes: must be a positive whole number, got 1.5"),
    ],
)
def test_a_bad_table_names_the_key(table: dict[str, Any], message: str) -> None:
    with pytest.raises(CheckConfigError) as raised:
        parse_check_config(table, CONFIG)
    assert str(raised.value) == message
