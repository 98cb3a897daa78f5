"""river adapters: the private online learners as river estimators.

* :class:`PrivatePairwiseClassifier` (:mod:`onpair.river.classifier`): online AUC maximisation as a
  river binary classifier (calibrated probabilities with the default learner);
* :class:`PrivateClassifier` (:mod:`onpair.river.multiclass`): a calibrated multi-class classifier, one
  budget for the whole stream whatever the number of classes;
* :class:`MetricTransformer` and :func:`metric_distance` (:mod:`onpair.river.metric`): a learned
  metric as a river transformer and as a distance for river's k-NN;
* :class:`PrivateStandardScaler` (:mod:`onpair.river.scaler`): standardisation with privately released
  means and variances, the private alternative to river's ``StandardScaler``;
* :func:`pipeline_report` (:mod:`onpair.river.composition`): the record-level total of every onpair model
  in a river pipeline (their zCDP costs add);
* :class:`PositiveClass` (:mod:`onpair.river.labels`): a river binary metric (``ROCAUC``, ``LogLoss``) read
  over a declared label domain such as ``("no", "yes")``.

Both read dict records through one mapper (:mod:`onpair.river.records`: feature order, missing and
undeclared keys, value checks) and keep a lineage of clones (:mod:`onpair.river.lineage`). They read
only public surfaces of the learners they drive: released models, ``privacy_report()``, the public
bounds map. This is the only package of onpair that imports river; ``import onpair`` does not import it.
"""

from .classifier import PrivatePairwiseClassifier
from .multiclass import PrivateClassifier
from .metric import MetricTransformer, metric_distance
from .scaler import PrivateStandardScaler
from .composition import pipeline_report
from .labels import PositiveClass

__all__ = ["PrivatePairwiseClassifier", "PrivateClassifier", "MetricTransformer", "metric_distance", "PrivateStandardScaler",
           "pipeline_report", "PositiveClass"]
