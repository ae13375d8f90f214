"""Command-line tools, one module per tool, each exposing ``main(argv) -> int``."""
