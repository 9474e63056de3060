"""The screens the console stacks: the main screen with its tabs, and one run in full."""
