"""Guards: cheap Python forms of the rules' CEL, specialised per program and compiled to
functions."""
