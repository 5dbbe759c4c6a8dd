"""demo.py after a nap: `slow.py SECONDS` sleeps that long before it serves stdio, as
a server that `npx` or `uvx` must fetch first, or a busy machine, starts late."""

from __future__ import annotations

import runpy
import sys
import time
from pathlib import Path

if __name__ == "__main__":
    time.sleep(float(sys.argv[1]))
    demo = Path(__file__).with_name("demo.py")
    sys.argv = [str(demo)]
    runpy.run_path(str(demo), run_name="__main__")
