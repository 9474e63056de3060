"""How server data reads on screen: pure functions from wire shapes to text and styled lines (a run's
state, a step's record, a verdict and its bars, the timeline, what changed between two reads), and the
theme's colours as the styles they use. Nothing here draws or talks to a server."""
