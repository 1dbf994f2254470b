"""The corpus: source adapters, the audit into the seven-column table, admission splits."""
