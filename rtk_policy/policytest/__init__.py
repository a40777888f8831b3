"""Policy tests: `*_test.yaml` files, inline examples, running and reporting them, the pytest
plugin."""
