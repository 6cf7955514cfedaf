"""pipelines.engine.coders: Beam's generic coder's bytes, with size estimates that read a block's head only."""

from __future__ import annotations

import dataclasses
import pickle

import apache_beam as beam
from apache_beam.coders import coders, typecoders
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.util import assert_that, equal_to
from apache_beam.typehints import Any
from google.protobuf.wrappers_pb2 import BytesValue

from pipelines.engine import make_pipeline
from pipelines.engine.coders import HEAD, BlockCoder, use_block_coder


@dataclasses.dataclass
class Story:
    story_id: str
    sentences: tuple


PICKLED: list[str] = []  # the story ids pickled, in order


@dataclasses.dataclass
class CountedStory(Story):
    """A Story that records every pickle of itself (what a size estimate encodes)."""

    def __reduce__(self):
        PICKLED.append(self.story_id)
        return (Story, (self.story_id, self.sentences))


VALUES = [
    None,
    7,
    -3,
    2**70,
    1.5,
    "故事",
    b"\x00\x01",
    True,
    ("k", True),
    ("part", [Story(f"s{i}", ("句子。" * i,)) for i in range(3)]),
    [Story(f"s{i}", ("句子。" * (i % 5),)) for i in range(64)],
    ("key", [[1, 2, 3]] * 100),
    {"a": [1, 2], "b": "c"},
    (),
    [],
]


def test_the_bytes_are_fast_primitives_coders_bytes():
    generic, ours = coders.FastPrimitivesCoder(), BlockCoder()
    for value in VALUES:
        encoded = ours.encode(value)
        assert encoded == generic.encode(value)
        assert ours.decode(encoded) == value


def test_estimates_are_exact_up_to_head_items_and_scaled_beyond():
    generic, ours = coders.FastPrimitivesCoder(), BlockCoder()
    for value in VALUES[:10] + VALUES[12:]:
        assert ours.estimate_size(value) == generic.estimate_size(value), value
    same = [Story(f"s{i:02d}", ("同样长的句子。",)) for i in range(64)]  # items of one size: exact
    assert ours.estimate_size(same) == generic.estimate_size(same)
    mixed = VALUES[10]
    assert abs(ours.estimate_size(mixed) - generic.estimate_size(mixed)) < 0.25 * generic.estimate_size(mixed)
    assert ours.estimate_size(("part", same)) == generic.estimate_size(("part", same))  # nested in a pair too
    assert ours.estimate_size([("part", same)] * 9) == generic.estimate_size([("part", same)] * 9)


def test_a_blocks_estimate_encodes_its_head_only():
    block = ("partition", [CountedStory(f"s{i}", ("一句话。" * 20,)) for i in range(64)])
    PICKLED.clear()
    BlockCoder().estimate_size(block)
    assert PICKLED == [f"s{i}" for i in range(HEAD)]
    PICKLED.clear()
    coders.FastPrimitivesCoder().estimate_size(block)
    assert len(PICKLED) == 64  # what Beam's own coder encodes for one sampled element
    PICKLED.clear()
    assert pickle.loads(pickle.dumps(BlockCoder())) == BlockCoder()  # a coder Dataflow can ship


def test_make_pipeline_makes_it_the_coder_of_untyped_elements_and_a_run_is_unchanged():
    p = make_pipeline(PipelineOptions(["--direct_num_workers=1"]))
    assert isinstance(typecoders.registry.get_coder(Any), BlockCoder)
    assert isinstance(typecoders.registry.get_coder(object), BlockCoder)
    use_block_coder()  # once: a second call changes nothing
    assert isinstance(typecoders.registry.get_coder(Any), BlockCoder)
    assert isinstance(typecoders.registry.get_coder(BytesValue), coders.ProtoCoder)  # as in Beam's own order
    assert typecoders.registry.get_coder(Any).as_deterministic_coder(
        "keys"
    ) == coders.FastPrimitivesCoder().as_deterministic_coder(
        "keys"
    )  # GroupByKey keys: Beam's deterministic coder, its bytes
    blocks = [(f"k{i % 3}", [Story(f"s{i}-{j}", ("句。",) * j) for j in range(10)]) for i in range(30)]
    grouped = (
        p
        | beam.Create(blocks)
        | beam.GroupByKey()
        | beam.MapTuple(lambda key, lists: (key, sorted(s.story_id for block in lists for s in block)))
    )
    expected = [(f"k{k}", sorted(f"s{i}-{j}" for i in range(30) if i % 3 == k for j in range(10))) for k in range(3)]
    assert_that(grouped, equal_to(expected))
    p.run().wait_until_finish()
