"""What a demo worker hands in for a step and how it gets there: the draft, the route chosen, the
handoff read, the redraft a model check or a rejection asks for. Agents and people share it."""
