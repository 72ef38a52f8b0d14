"""Calibration: thresholds from labelled traffic with a precision guarantee."""

from tooldedup.calibration.intervals import clopper_pearson_lower, labels_needed, wilson_lower
from tooldedup.calibration.samples import LabelledPair, Sample, load_pairs, samples_from_log
from tooldedup.calibration.thresholds import Calibration, OperatingPoint, choose_thresholds, sweep

__all__ = [
    "Calibration",
    "LabelledPair",
    "OperatingPoint",
    "Sample",
    "choose_thresholds",
    "clopper_pearson_lower",
    "labels_needed",
    "load_pairs",
    "samples_from_log",
    "sweep",
    "wilson_lower",
]
