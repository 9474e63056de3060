"""What the operator sets up: the console's settings file and the colour themes it loads at start."""
