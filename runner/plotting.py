"""matplotlib's pyplot, imported on first use with the file-only backend.

Importing pyplot costs about 0.5 s; every module that draws a figure asks for it here, when it
draws, so that the commands and runs that write no figure (and a run until its end) never pay it.
"""
from __future__ import annotations

import functools


@functools.cache
def pyplot():
    """matplotlib.pyplot, with the Agg backend chosen first (files only, never a window)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
