"""HERO: efficiency analyses (behaviours, entropy, cost, TRS) and the hierarchical advantage.

Layer: model.
"""
