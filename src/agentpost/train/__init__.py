"""Training adapters (TRL, verl) and multi-turn tokenisation with loss masks.

Layer: model.
"""
