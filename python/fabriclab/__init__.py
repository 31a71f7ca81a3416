"""fabriclab: Python side of the fabriclab simulator.

Pure Python modules only at import time (``fabriclab.plot`` draws figures with
matplotlib); compiled bindings, when present, are imported lazily by the
modules that need them.
"""

__all__ = ["plot"]
