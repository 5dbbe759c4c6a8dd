"""What keeps the user's machine safe: owned files, protected paths, trusted folders."""
