"""The jobs' element coder: Beam's generic coder, with a size estimate that does not encode a block.

Why: Beam measures every PCollection's mean element size for its metrics by encoding a
sample of its elements (the first 10, then about 7 per doubling of the count), inside fused
stages too, where nothing is encoded otherwise. The jobs' elements are coarse, a block of 64
prepared stories or of their examples, so each sampled element is a pickle of a block: 4,400
of them cost a LOT build of 20,000 stories 0.78 CPU-s (3% of the build) and told it nothing.

`BlockCoder` writes exactly FastPrimitivesCoder's bytes (the coder Beam picks for an element
with no type hint, which no job declares), so what crosses a shuffle is unchanged. Only its
estimate differs: a list or tuple of more than `HEAD` items is estimated from its first
`HEAD` items, scaled to its length (an estimate, as Beam's sampling already is; exact for
anything shorter, strings, numbers and single objects included). `use_block_coder` makes it
the coder of every element without a type hint (make_pipeline calls it); ProtoCoder and
ProtoPlusCoder still come first for protocol buffers, as in Beam's own order.
"""

from __future__ import annotations

from apache_beam.coders import coder_impl, coders, typecoders

HEAD = 4  # the items of a long list or tuple that its size estimate encodes


class _BlockCoderImpl(coder_impl.FastPrimitivesCoderImpl):
    """FastPrimitivesCoderImpl with `estimate_size` reading a long sequence's head only."""

    def get_estimated_size_and_observables(self, value, nested=False):
        return self.estimate_size(value, nested), []

    def estimate_size(self, value, nested=False):
        kind = type(value)
        if kind is not list and kind is not tuple:
            return super().estimate_size(value, nested)
        n = len(value)
        items = sum(self.estimate_size(item, True) for item in (value[:HEAD] if n > HEAD else value))
        if n > HEAD:
            items = round(items * n / HEAD)
        return 1 + _varint_size(n) + items  # the type byte and the length (a varint), as encoded


def _varint_size(n: int) -> int:
    return max(1, (n.bit_length() + 6) // 7)


class BlockCoder(coders.FastPrimitivesCoder):
    """FastPrimitivesCoder (the same bytes) whose size estimate encodes only the first
    `HEAD` items of a long list or tuple (the module says why)."""

    def _create_impl(self):
        return _BlockCoderImpl(self._fallback_coder.get_impl())


def use_block_coder() -> None:
    """Make BlockCoder the coder of elements without a type hint in this process (after
    ProtoCoder and ProtoPlusCoder, as Beam's default FastPrimitivesCoder is); once. Beam's
    public `register_fallback_coder` would put it in front of those two, so the registry's
    chain is set as a whole."""
    registry = typecoders.registry
    current = getattr(registry, "_fallback_coder", None)
    if getattr(current, "_storybench_blocks", False):
        return
    chain = typecoders.FirstOf([coders.ProtoCoder, coders.ProtoPlusCoder, BlockCoder])
    chain._storybench_blocks = True
    registry._fallback_coder = chain
