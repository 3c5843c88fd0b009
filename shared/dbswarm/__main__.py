import sys

from dbswarm.cli import main

sys.exit(main())
