"""The resident engine: the Unix-socket server, its thin client, the loopback http hook, and the
memos."""
