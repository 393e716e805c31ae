"""SCVD: candidate-state replay, verification annotations, metrics and distillation data."""
