"""The pipeline of stages (text → shell → policy → decision) and the rewritten command's
assembly."""
