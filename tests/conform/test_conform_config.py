"""conform.toml: the identities, the group, the clock speed and the servers, and errors naming the key."""

from __future__ import annotations

from typing import Any

import pytest

from conform import config as conform_config

IDENTITIES: dict[str, Any] = {
    "operator": {"person": "ops@example.com", "token": "tok-operator"},
    "person1": {"person": "one@example.com", "token": "tok-one"},
    "person2": {"person": "two@example.com", "token": "tok-two"},
    "outsider": {"person": "out@example.com", "token": "tok-out"},
    "agent1": {"token": "tok-a1", "id": "a_one"},
    "agent2": {"token_env": "AGENT2_TOKEN"},
}


def _raw(**changes: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "server": {"url": "http://h/mcp", "speed": 60},
        "group": {"id": "g"},
        "identities": dict(IDENTITIES),
    }
    raw.update(changes)
    return raw


def test_a_config_names_identities_group_speed_and_servers() -> None:
    parsed = conform_config.parse(_raw(), env={"AGENT2_TOKEN": "tok-a2"})
    assert (parsed.servers, parsed.speed, parsed.group) == (("http://h/mcp",), 60.0, "g")
    assert parsed.actor("agent2") == conform_config.Actor("agent2", "agent", "tok-a2", None)
    assert parsed.actor("agent1").value == "a_one"
    assert parsed.actor("outsider") == conform_config.Actor(
        "outsider", "person", "tok-out", "out@example.com"
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            _raw(identities={k: v for k, v in IDENTITIES.items() if k != "person2"}),
            "identities.person2: required (another member of the same group)",
        ),
        (_raw(server={"speed": 0}), "server.speed: expected a positive number"),
        (_raw(server={"url": "h/mcp"}), "server.url: expected an http(s) URL"),
        (_raw(group={}), "group.id: required"),
        (_raw(extra=1), "extra: unknown key"),
        (
            _raw(identities={**IDENTITIES, "agent1": {"token": "tok-a1", "person": "x@example.com"}}),
            "identities.agent1.person: unknown key",
        ),
        (
            _raw(identities={**IDENTITIES, "person1": {"person": "one@example.com", "token": "tok-two"}}),
            "every identity needs its own token",
        ),
        (
            _raw(identities={**IDENTITIES, "person1": {"person": "one@example.com"}}),
            "identities.person1.token: give token or token_env",
        ),
        (
            _raw(identities={**IDENTITIES, "agent2": {"token_env": "NOT_SET_ANYWHERE"}}),
            "environment variable NOT_SET_ANYWHERE is not set",
        ),
    ],
)
def test_config_errors_name_the_key(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(conform_config.ConfigError) as raised:
        conform_config.parse(raw, env={"AGENT2_TOKEN": "tok-a2"})
    assert message in str(raised.value)
