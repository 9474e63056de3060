"""The `[[notify]]` tables of the org config: what they accept, and errors that name the table and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.notify import NotifyTarget
from engine.org import ConfigError, OrgConfig

GOOD = """
[[people]]
email = "ops@example.com"
operator = true

[[notify]]
url = "https://hooks.example.com/apc"
kinds = ["overdue", "escalation"]
secret = "a-long-shared-secret"

[[notify]]
url = "http://127.0.0.1:9000/slack"
kinds = ["new_work", "run_ended"]
format = "slack"
"""


def load(tmp_path: Path, text: str) -> OrgConfig:
    path = tmp_path / "org.toml"
    path.write_text(text)
    return OrgConfig.load(path)


def test_notify_tables_load_with_their_kinds_secret_and_format(tmp_path: Path) -> None:
    org = load(tmp_path, GOOD)
    assert org.notify == (
        NotifyTarget(
            "https://hooks.example.com/apc", ("overdue", "escalation"), "a-long-shared-secret", "json"
        ),
        NotifyTarget("http://127.0.0.1:9000/slack", ("new_work", "run_ended"), None, "slack"),
    )
    assert org.notify_urls("overdue") == ["https://hooks.example.com/apc"]
    assert org.notify_urls("run_ended") == ["http://127.0.0.1:9000/slack"]


def test_no_notify_tables_is_no_targets(tmp_path: Path) -> None:
    org = load(tmp_path, '[[people]]\nemail = "ops@example.com"\n')
    assert (org.notify, org.notify_urls("overdue")) == ((), [])


TARGET = '[[notify]]\nurl = "https://hooks.example.com/apc"\nkinds = ["overdue"]\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (TARGET + 'method = "PUT"\n', "notify[0].method: unknown key (allowed: format, kinds, secret, url)"),
        ('[[notify]]\nkinds = ["overdue"]\n', "notify[0].url: required, a non-empty string"),
        (
            '[[notify]]\nurl = "http://hooks.example.com/apc"\nkinds = ["overdue"]\n',
            "notify[0].url: expected an https:// URL (or http:// to this machine)",
        ),
        (
            '[[notify]]\nurl = "https://hooks.example.com/apc"\n',
            "notify[0].kinds: required, a list of distinct kinds among overdue, escalation, new_work, run_ended",
        ),
        (
            '[[notify]]\nurl = "https://hooks.example.com/apc"\nkinds = ["overdue", "overdue"]\n',
            "notify[0].kinds: required, a list of distinct kinds among overdue, escalation, new_work, run_ended",
        ),
        (
            '[[notify]]\nurl = "https://hooks.example.com/apc"\nkinds = ["late"]\n',
            "notify[0].kinds: unknown kind 'late' (known: overdue, escalation, new_work, run_ended)",
        ),
        (TARGET + 'secret = "short"\n', "notify[0].secret: expected a string of at least 16 characters"),
        (TARGET + 'format = "teams"\n', "notify[0].format: expected one of json, slack"),
        (TARGET + TARGET, "notify[1].url: https://hooks.example.com/apc is already a target"),
        (
            '[notify]\nurl = "https://hooks.example.com/apc"\n',
            "notify: expected an array of tables ([[notify]])",
        ),
    ],
    ids=[
        "unknown key",
        "no url",
        "plain http",
        "no kinds",
        "repeated kind",
        "unknown kind",
        "short secret",
        "unknown format",
        "same url twice",
        "not an array",
    ],
)
def test_a_bad_notify_table_is_refused_with_the_key_named(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load(tmp_path, text)
    assert str(raised.value) == f"{tmp_path / 'org.toml'}: {message}"
