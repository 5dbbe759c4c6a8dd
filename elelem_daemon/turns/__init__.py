"""A turn's extras a session holds: steering, the plan, modes."""
