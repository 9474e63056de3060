"""An event's name and data, checked before they are sent."""

from __future__ import annotations

from console.modals.event import parse_event


def test_event_names_and_data_are_checked_before_sending() -> None:
    assert parse_event("invoice-paid", '{"amount": 1}') == (("invoice-paid", {"amount": 1}), [])
    assert parse_event("invoice-paid", "") == (("invoice-paid", None), [])
    assert parse_event("Paid!", "[1]") == (
        None,
        [
            "name: lowercase letters, digits, '_' or '-', starting with a letter (at most 64)",
            "data: expected a JSON object",
        ],
    )
