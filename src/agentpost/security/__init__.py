"""SecureVibe: a bundled offline security suite, SecPass grading, the five-level reward, dynamic
sampling, behaviour annotation and attribution statistics (spec SECUREVIBE.md).

Layer: model.
"""
