"""One module per `cohtb` verb (cohtb/cli.py lists them): its options (add_arguments) and what it does (run).
Each is imported only when its verb is given."""
