"""What the console keeps of a server while it runs: the session it was opened with, the paged lists
and how often they are read again, the documents read once, and the notices told to the operator.
Plain objects, no Textual screen: the flows read through them and hand what they hold down to the
screens."""
