"""SCVD's distillation data (spec b.7, b.8): the teacher hand-off (``collect``), the FTD baseline,
matching SCVD and FTD rows, the training samples with g_ver removed."""
