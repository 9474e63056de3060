"""Delivery of the outbox to the `[[notify]]` targets: what is sent (`message`) and how (`deliverer`)."""

from engine.outbox.deliverer import Deliverer, RetryPolicy

__all__ = ["Deliverer", "RetryPolicy"]
