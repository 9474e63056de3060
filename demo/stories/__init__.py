"""What the demo shows and when: the stream of runs, the stage's moments, the scripted stories (their
TOML files are in this folder) and the player that runs them, and the presenter's controls."""
