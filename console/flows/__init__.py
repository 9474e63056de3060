"""What the console does when something happens: the operator's actions, each read top to bottom."""
