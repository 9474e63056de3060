"""How a user sees a demo: the console in the terminal with the Demo agents tab, the console in a
browser (a demo server process and one console per tab), or headless with a summary."""
