"""The results worker: an HTTP API core in the Python standard library, on SQLite or D1."""
