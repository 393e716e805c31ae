"""Sandboxes: a lifecycle protocol with bubblewrap (default) and docker CLI backends."""
