"""The keys: one registry of every action and its keys (`registry`), what a widget handles of it
(`scoped`), and the command palette read from it (`commands`)."""
