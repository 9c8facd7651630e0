"""`python -m memorymanager` = the `memorymanager` command."""
import sys

from memorymanager.cli.app import main

sys.exit(main())
