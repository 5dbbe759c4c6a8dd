"""`python -m elelem_daemon [args]`: the daemon unless a CLI command is named."""

import sys

from .cli import COMMANDS, main

if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(args if args and args[0] in COMMANDS else ["daemon", *args]))
