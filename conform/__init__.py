"""`apc conform`: a portable conformance runner for any Agent Process server, over MCP only.

It imports nothing from the engine or the console: it reaches a server the way any agent or person
does, so it checks ours and anyone else's alike. `conform.runner.run` is the Python API.
"""
