"""The one way in for bytes produced where agentpost does not hold the pen.

Everything that comes out of a sandbox (file listings, file contents, snapshot archives), out of
a trajectory (``metadata.final_files`` keys) or out of a run folder (snapshot references and
archives, saved final states) passes through this room before it touches the host:

- ``keys``: a key is a normalised relative path (no NUL, no ``..``, not absolute), checked
  before it is joined onto anything; the size bounds (``Bounds``) and the typed refusals;
- ``hostdir``: ``openat``-style descent under a root directory's fd (``O_NOFOLLOW`` on every
  component), refusing symlinks, devices and FIFOs (and, for run folders, hard links); every
  host path a reference names is checked to lie inside its root before it is opened;
- ``tarball``: snapshot archives packed and unpacked with that descent: nothing is followed,
  hard links become copies taken from the archive itself, devices and FIFOs are dropped, and
  the apparent size (sparse files count at their full size) is bounded;
- ``listing``: a sandbox's file listing travels NUL-separated, each entry checked as a key.

A refusal is ``keys.Refused`` (not an ``OSError`` or ``AgentpostError``, so no handler written for
infrastructure faults turns hostile data into a retry): the caller decides whose result it is.

Layer: io.
"""
