"""Documents agentpost writes: ``formats`` (the table of every output format, ``producer``) and
``write`` (the one atomic write). Two modules because the table is data every layer reads
(pure analyses stamp their format) while writing is I/O.

Layer: model.
"""
