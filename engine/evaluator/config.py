"""The org config's `[check]` table: which evaluator answers, and the limits `describe` reports.

The model and provider are server configuration and never appear in a process file (check profile
§5). A server lists `check-1` only while `build_evaluator` returns an evaluator, so a missing or
unusable evaluator is a configuration error at start, not a surprise at the first submission.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from engine.evaluator.base import CheckConfigError, Evaluator

EvaluatorKind = Literal["openai", "scripted"]

_LIMIT_KEYS = ("pass", "fail", "confidence", "state_bytes")
_OPENAI_KEYS = ("base_url", "model", "api_key", "api_key_env", "timeout_seconds")
_SCRIPTED_KEYS = ("answers",)


@dataclass(frozen=True)
class CheckLimits:
    """Server defaults for thresholds a question does not set, and how much run data a model sees."""

    pass_at: float = 0.9
    fail_below: float | None = None
    confidence: float = 0.8
    state_bytes: int = 65536

    def wire(self) -> dict[str, Any]:
        """The check keys of `describe.limits`."""
        return {
            "checkPass": self.pass_at,
            "checkFail": self.fail_below,
            "checkConfidence": self.confidence,
            "checkStateBytes": self.state_bytes,
        }


@dataclass(frozen=True)
class OpenAISettings:
    base_url: str
    model: str
    api_key: str | None = None
    api_key_env: str | None = None
    """The environment variable holding the key, read when the evaluator is built."""
    timeout_seconds: float = 30.0


@dataclass(frozen=True)
class CheckConfig:
    evaluator: EvaluatorKind | None = None
    """None: no evaluator configured, so the server does not offer `check-1`."""
    openai: OpenAISettings | None = None
    answers: Path | None = None
    """The scripted evaluator's answers file, resolved against the config file's folder."""
    limits: CheckLimits = CheckLimits()


def _number(table: Mapping[str, Any], key: str, default: float) -> float:
    value = table.get(key, default)
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0.0 <= value <= 1.0:
        raise CheckConfigError(f"check.{key}: must be a number from 0 to 1, got {value!r}")
    return float(value)


def _string(table: Mapping[str, Any], key: str) -> str | None:
    value = table.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise CheckConfigError(f"check.{key}: must be a non-empty string, got {value!r}")
    return value


def _required(table: Mapping[str, Any], key: str, kind: str) -> str:
    value = _string(table, key)
    if value is None:
        raise CheckConfigError(f"check.{key}: required when check.evaluator is '{kind}'")
    return value


def _limits(table: Mapping[str, Any]) -> CheckLimits:
    pass_at = _number(table, "pass", 0.9)
    fail_below = None if "fail" not in table else _number(table, "fail", 0.0)
    if fail_below is not None and fail_below > pass_at:
        raise CheckConfigError(f"check.fail: {fail_below} is above check.pass {pass_at}")
    state_bytes = table.get("state_bytes", 65536)
    if not isinstance(state_bytes, int) or isinstance(state_bytes, bool) or state_bytes < 1:
        raise CheckConfigError(f"check.state_bytes: must be a positive whole number, got {state_bytes!r}")
    return CheckLimits(pass_at, fail_below, _number(table, "confidence", 0.8), state_bytes)


def _openai(table: Mapping[str, Any]) -> OpenAISettings:
    base_url = _required(table, "base_url", "openai")
    model = _required(table, "model", "openai")
    if "api_key" in table and "api_key_env" in table:
        raise CheckConfigError("check.api_key: give either check.api_key or check.api_key_env, not both")
    timeout = table.get("timeout_seconds", 30.0)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or not timeout > 0:
        raise CheckConfigError(f"check.timeout_seconds: must be a positive number, got {timeout!r}")
    return OpenAISettings(
        base_url, model, _string(table, "api_key"), _string(table, "api_key_env"), float(timeout)
    )


def parse_check_config(table: Mapping[str, Any] | None, config_file: Path) -> CheckConfig:
    """Read the `[check]` table (None when the config has none). Raises `CheckConfigError`."""
    if table is None:
        return CheckConfig()
    known = ("evaluator", *_LIMIT_KEYS, *_OPENAI_KEYS, *_SCRIPTED_KEYS)
    for key in table:
        if key not in known:
            raise CheckConfigError(f"check.{key}: unknown key")
    kind = table.get("evaluator")
    if kind not in (None, "openai", "scripted"):
        raise CheckConfigError(f"check.evaluator: must be 'openai' or 'scripted', got {kind!r}")
    own = {"openai": _OPENAI_KEYS, "scripted": _SCRIPTED_KEYS}.get(str(kind), ())
    for key in (*_OPENAI_KEYS, *_SCRIPTED_KEYS):
        if key in table and key not in own:
            used = f"with check.evaluator = {kind!r}" if kind else "without check.evaluator"
            raise CheckConfigError(f"check.{key}: not used {used}")
    limits = _limits(table)
    if kind == "openai":
        return CheckConfig("openai", openai=_openai(table), limits=limits)
    if kind == "scripted":
        answers = _required(table, "answers", "scripted")
        return CheckConfig("scripted", answers=config_file.parent / answers, limits=limits)
    return CheckConfig(limits=limits)


def build_evaluator(config: CheckConfig, env: Mapping[str, str] | None = None) -> Evaluator | None:
    """The configured evaluator, or None when there is none. Raises `CheckConfigError`.

    `env` defaults to the process environment; tests pass their own. The evaluators are imported
    here, not at the top: `engine.org` imports this module, every `apc` command imports that, and
    only a server needs an HTTP client.
    """
    from engine.evaluator.openai import OpenAIEvaluator
    from engine.evaluator.scripted import ScriptedEvaluator

    if config.answers is not None:
        return ScriptedEvaluator.load(config.answers)
    settings = config.openai
    if settings is not None:
        api_key = settings.api_key
        if settings.api_key_env is not None:
            api_key = (os.environ if env is None else env).get(settings.api_key_env)
            if not api_key:
                raise CheckConfigError(
                    f"check.api_key_env: environment variable {settings.api_key_env} is not set"
                )
        return OpenAIEvaluator(settings.base_url, settings.model, api_key, settings.timeout_seconds)
    return None
