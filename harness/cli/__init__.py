"""Command-line interfaces. Thin: they parse arguments and call the library."""
