"""``python -m repmode ...``: see repmode/tools/cli.py."""
import sys

from .tools.cli import main

sys.exit(main())
