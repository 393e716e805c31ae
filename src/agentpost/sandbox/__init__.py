"""Sandboxes: a lifecycle protocol with bubblewrap (default) and docker CLI backends.

- ``base``: the contract (Sandbox, Backend, SandboxSpec, Limits, ExecResult, Snapshot).
- ``registry.get_backend(name)``: ``bwrap`` | ``docker`` | ``module:Class``.
- ``bwrap``: the default backend; ``docker``: Docker/Podman CLI with task images.
- ``hostfs``: symlink-safe host access to writable dirs, snapshots; ``capture``: capped output.
- ``executors``: many sandbox jobs at once (local threads); ``ray_executor``: the same on Ray.
"""
