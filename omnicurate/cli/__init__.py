"""The ``curate`` command line: a thin layer that calls the domain and prints."""
