"""Freshness: whether the code a record cites still holds what the record was written against."""
