"""Claude Code settings: reading its permission rules; installing and removing our hook entries."""
