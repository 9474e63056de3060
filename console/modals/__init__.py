"""Dialogs: decisions, reasons, starting runs, events, answers, help."""
