"""Transitional: what `swaro_nb.analysis` held now lives in `swaro_nb.runs`, `swaro_nb.tables` and `swaro_nb.evaluate`."""
from .runs import *      # noqa: F401,F403
from .tables import *    # noqa: F401,F403
from .evaluate import *  # noqa: F401,F403
