"""The layers of settings and policies: where they are (`paths`), reading them with their trust
(`layers`), the user's trust in projects (`trust`), and the merged `config.toml` (`load`)."""
