"""Save and load learners: the public path of :func:`save_learner`, :func:`load_learner` and :func:`load`
(``onpair.load``). The file format lives in :mod:`onpair.core.persistence`, in the shared core because every
learner's ``save`` writes through it; this module is a face, as :mod:`onpair.learners` is.
"""

from . import learners  # noqa: F401  (importing the learners registers them: a file names its class; `import onpair` is lazy)
from .core.persistence import FORMAT_VERSION, MAGIC, load, load_learner, save_learner

__all__ = ["save_learner", "load_learner", "load", "FORMAT_VERSION", "MAGIC"]
