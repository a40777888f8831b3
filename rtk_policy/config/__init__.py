"""`config.toml`: the settings layers and their values."""
