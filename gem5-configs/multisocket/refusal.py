"""How a config refuses its options: the reason on stderr, exit status 2. gem5 turns a SystemExit carrying a
message into a pybind11 cast error ("Unable to cast Python instance of type str to C++ type int") that hides the
reason, so the message is printed and the exit status given as a number."""

import sys


def refuse(message: str):
    print(message, file=sys.stderr, flush=True)
    sys.exit(2)
