"""The console's screens and panes: work queue, runs, processes, run detail, evidence."""
