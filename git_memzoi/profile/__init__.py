"""The memzoi profile: vocabularies, models, concept IDs and frontmatter. Pure: bytes in, models out."""
