"""Who acts in a demo: the agents (over MCP, as any third-party agent), the people, the outside world
that sends events; how they reach the server, and what they are told (cues, "leave this to me", pause)."""
