"""Record types and their pyarrow schemas: one source of truth to write and to validate."""
