"""The tools' processes: their groups, the reaper that outlives the daemon, shutdown signals."""
