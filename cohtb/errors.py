"""The one exception type the CLI turns into a clear message and a non-zero exit."""


class CohtbError(Exception):
    """A user-facing error: the message names the file and the line, record or field at fault."""
