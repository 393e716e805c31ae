"""agentpost: find which behaviour holds a coding agent back, and turn it into a training signal."""

__version__ = "0.1.0"

from agentpost import _moved  # old import paths answered for one release (see _moved.py)

_moved.install()
