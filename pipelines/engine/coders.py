"""The jobs' element coder: Beam's generic coder, with a size estimate that does not encode a block.

Why: Beam measures every PCollection's mean element size for its metrics by encoding a
sample of its elements (the first 10, then about 7 per doubling of the count), inside fused
stages too, where nothing is encoded otherwise. The jobs' elements are coarse, a block of 64
prepared stories or of their examples, so each sampled element is a pickle of a block: 4,400
of them cost a LOT build of 20,000 stories 0.78 CPU-s (3% of the build) and told it nothing.

`BlockCoder` encodes with FastPrimitivesCoder (the coder Beam picks for an element with no
type hint, which no job declares): an element's bytes are that coder's (inside a pair or a
window, Beam puts their length in front, as for any coder of its own). Only its estimate
differs: a list or tuple of more than `HEAD` items is estimated from its first `HEAD` items,
scaled to its length (an estimate, as Beam's sampling already is; exact for anything
shorter, strings, numbers and single objects included). `use_block_coder` makes it the
coder of every element without a type hint (make_pipeline calls it); protocol buffer types
still get ProtoCoder and ProtoPlusCoder, as in Beam's own order.

Only Beam's public coder API is used: a `Coder` subclass (encode, decode, estimate_size and
what FastPrimitivesCoder answers about keys and determinism) and the registry's
`register_fallback_coder`.
"""

from __future__ import annotations

import functools

from apache_beam.coders import coders, typecoders
from apache_beam.typehints import Any

HEAD = 4  # the items of a long list or tuple that its size estimate encodes
_SEQUENCES = (list, tuple)


def _varint_size(n: int) -> int:
    return max(1, (n.bit_length() + 6) // 7)


class BlockCoder(coders.Coder):
    """FastPrimitivesCoder's bytes, with a size estimate that encodes only the first `HEAD`
    items of a long list or tuple (the module says why)."""

    def __init__(self):
        self._generic = coders.FastPrimitivesCoder()

    @classmethod
    def from_type_hint(cls, typehint, registry):
        # Beam's own chain tries these two before its generic coder: protocol buffers keep them
        for special in (coders.ProtoCoder, coders.ProtoPlusCoder):
            try:
                return special.from_type_hint(typehint, registry)
            except (TypeError, ValueError):  # not a protocol buffer type
                continue
        return cls()

    def encode(self, value):
        return self._generic.encode(value)

    def decode(self, encoded):
        return self._generic.decode(encoded)

    def estimate_size(self, value):
        if type(value) not in _SEQUENCES:
            return self._generic.estimate_size(value)
        return self._sequence_size(value)

    def _sequence_size(self, value) -> int:
        """What FastPrimitivesCoder writes for a list or tuple: a type byte, its length (a
        varint) and each item as encoded inside it; a long one's items from its head, scaled."""
        n = len(value)
        items = sum(
            self._sequence_size(item) if type(item) in _SEQUENCES else len(self._generic.encode((item,))) - 2
            for item in (value[:HEAD] if n > HEAD else value)
        )  # an item inside a sequence: a 1-tuple's bytes less its type byte and length
        if n > HEAD:
            items = round(items * n / HEAD)
        return 1 + _varint_size(n) + items

    def is_deterministic(self):
        return self._generic.is_deterministic()

    def as_deterministic_coder(self, step_label, error_message=None):
        return self._generic.as_deterministic_coder(step_label, error_message)

    def to_type_hint(self):
        return Any

    # as FastPrimitivesCoder: an untyped element may be a (key, value) pair a GroupByKey groups
    def is_kv_coder(self):
        return True

    def key_coder(self):
        return self

    def value_coder(self):
        return self


@functools.cache
def use_block_coder() -> None:
    """Make BlockCoder the coder of elements without a type hint in this process; once."""
    typecoders.registry.register_fallback_coder(BlockCoder)
