"""Small helpers the hook's cold path shares: frozen records, sha256 without hashlib, lazy
regexes."""
