"""The hook service: request → engine → agent answer → audit record, for the CLI, the server and the
client."""
