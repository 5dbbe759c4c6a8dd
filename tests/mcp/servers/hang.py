"""An MCP server that reads its stdin and never answers `initialize`."""

import sys
import time

for _line in sys.stdin:
    time.sleep(0.01)
time.sleep(3600)
