"""`python -m memorymanager` = the `memorymanager` command."""
import sys

from .cli import main

sys.exit(main())
