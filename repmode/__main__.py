"""``python -m repmode ...``: see repmode/cli.py."""
import sys

from .cli import main

sys.exit(main())
