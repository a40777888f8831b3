"""The CEL backends (cel-expr-python, cel-python) behind one interface, and choosing one."""
