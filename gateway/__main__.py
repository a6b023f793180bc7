import sys

from gateway.app.cli import main

sys.exit(main())
