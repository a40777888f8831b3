"""`python -m rtk_policy`."""

import sys

from rtk_policy.main import main

sys.exit(main())
