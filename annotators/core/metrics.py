"""Precision, recall and F1 from counts (micro-averaged: sum the counts, then divide)."""

from __future__ import annotations


def prf(hits: float, predicted: float, gold: float) -> tuple[float, float, float]:
    """(precision, recall, F1); 0.0 where a denominator is 0."""
    precision = hits / predicted if predicted else 0.0
    recall = hits / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1
