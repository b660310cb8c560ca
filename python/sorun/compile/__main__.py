"""python -m sorun.compile ... (see sorun.compile.cli)."""
import sys

from .cli import main

sys.exit(main())
