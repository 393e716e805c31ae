"""The HTML report: hand-written SVG plots, one renderer per area, one self-contained page.

Layer: io.
"""
