"""The terminal face: `elelem chat`, `elelem ask`, `elelem sessions`."""
