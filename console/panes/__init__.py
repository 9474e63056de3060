"""What the tabs hold (work queue, runs, processes) and the run detail's evidence: each is given its data
and posts messages (`console.messages`) for whatever it cannot do itself."""
