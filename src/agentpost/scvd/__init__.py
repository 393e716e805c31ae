"""SCVD (student-conditioned verification distillation): the annotation protocol and its judges,
the panel, calibration, metrics, records and the diagnose pipeline; the distillation data
(collect, teacher, FTD, matching, samples) in ``distill/``."""
