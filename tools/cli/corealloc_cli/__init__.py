"""The corealloc command-line tool."""
