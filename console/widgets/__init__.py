"""Widgets the screens share: the keyed live table and the map view."""
