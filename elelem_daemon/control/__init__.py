"""What faces and commands do with an open session: run it (live), rewind it, edit its history."""
