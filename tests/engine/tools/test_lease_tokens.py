"""Signed lease tokens (`engine.tools.leases`): what one names comes back only under this key's tag."""

from __future__ import annotations

from engine.tools.leases import Leases, is_signed

KEY = bytes(range(32))


def test_a_token_names_its_run_and_step_and_each_issue_is_a_new_token() -> None:
    leases = Leases(KEY)
    first, second = leases.issue("r_1", "check.v2-final"), leases.issue("r_1", "check.v2-final")
    assert first != second
    assert [leases.holder(t) for t in (first, second)] == [("r_1", "check.v2-final")] * 2
    assert (is_signed(first), is_signed("Zm9v_-43randomcharsofanoldtoken")) == (True, False)


def test_anything_not_signed_with_the_key_names_nothing() -> None:
    leases = Leases(KEY)
    token = leases.issue("r_1", "one")
    body, tag = token.split(".")
    for fake in (
        Leases(bytes(32)).issue("r_1", "one"),
        f"{body}.{tag}x",
        f"{body}x.{tag}",
        f"{body}.{tag}.{tag}",
        ".",
        "é.ü",
        f"{body}.",
    ):
        assert leases.holder(fake) is None, fake
