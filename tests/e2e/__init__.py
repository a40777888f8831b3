"""End-to-end tests: the real agent CLIs, offline, against a fake model, with our hook installed."""
