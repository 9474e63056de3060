"""The checks, one module per subject; `conform.suite` lists the modules and collects their checks."""
