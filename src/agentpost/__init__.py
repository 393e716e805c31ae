"""agentpost: find which behaviour holds a coding agent back, and turn it into a training signal."""

__version__ = "0.1.0"
