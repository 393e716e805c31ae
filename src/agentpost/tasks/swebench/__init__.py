"""SWE-bench instances as tasks, offline: a user's instance file and local repository clones,
images by Python version on the debootstrap bases, grading with the harness's own eval script
and log parsers (the ``swebench`` package, ``setup.sh --swebench``). See ``suite.py``.

Layer: io.
"""
