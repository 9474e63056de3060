"""What the console does when something happens: each of the operator's actions, read top to bottom
(`decide`, `cancel`, `start`, `event`, `run`, `admin`, `files`, `present`), and the live refresh
(`refresh`). None imports the app: each is handed a `shell.Context`."""
