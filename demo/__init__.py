"""Live demos: demo agents that work agent steps over MCP like any third-party agent, demo people who
decide their work items, an event feed, and a stream of runs of the sample processes (`apc demo`).

Its rooms import only the ones after them (`.importlinter`): `cli`, `fronts/`, `system` (everything
wired together), `stories/`, `actors/`, `work/` (what a worker hands in), `world/`.
"""
