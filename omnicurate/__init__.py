"""The shells over the domain: the ``curate`` command line and the demo. Nothing imports this package."""
