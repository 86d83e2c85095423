"""The only package that speaks SQL: shared.db (durable authority) and index.db (disposable projection)."""
