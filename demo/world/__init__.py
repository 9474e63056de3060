"""The world the demo's actors live in: the org, the demo clock, the relations file and its expressions,
the values fields are drawn from, and the scene of a run those values come from."""
