"""`agentpost demo`: every stage offline on the bundled suites, one report (``pipeline.run_demo``).

The stages call the functions the commands call: ``terminal`` (``agentpost run`` with the
reference policies, ``agentpost import``, the efficiency analyses), ``hero`` (the HERO advantage
preview), ``scvd`` (``agentpost diagnose``), ``loopback`` (the real loop against the loopback fake
model, for the entropy analyses) and ``security`` (``agentpost security demo``)."""
