"""Files as the agent sees them and how its changes land: the Files port, hunks, changes."""
