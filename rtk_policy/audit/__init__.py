"""The audit log (DESIGN §8): records, their encoding and redaction, the chained store, verify and
stats."""
