"""stoker.integrations.megatron with pad_each_document_to: Megatron's ``cu_seqlens`` are the padded
boundaries and ``cu_seqlens_unpadded`` the real documents' (they used to be a copy of cu_seqlens,
so Transformer Engine would attend over the padding as if it were tokens). Checked against the
loader's provenance and through megatron-core 0.16.1's own THD path on the CPU."""

import pytest
import torch

import stoker
from integration_testlib import make_text_dataset, require_releases

pytest.importorskip("megatron.core.datasets.blended_megatron_dataset_builder")
require_releases(megatron_core="0.16.1")

LONG, M = 512, 8


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_text_dataset(tmp_path_factory.mktemp("megatron-padding"), documents=60)


def expected(pieces, padded):
    """A row's boundaries from its provenance: each piece by its padded room (or its real
    length), then the row's padding run as one more segment."""
    cuts, room = [0], [0]
    for p in sorted(pieces, key=lambda p: p["row_offset"]):
        assert p["row_offset"] == room[-1]
        room.append(p["row_offset"] + -(-p["length"] // M) * M)
        cuts.append(cuts[-1] + p["length"])
    if room[-1] < LONG:  # the padding run: as long in both
        cuts.append(cuts[-1] + LONG - room[-1])
        room.append(LONG)
    return room if padded else cuts


def test_cu_seqlens_unpadded_carries_the_real_document_lengths(data):
    from megatron.core.utils import get_thd_batch_on_this_cp_rank

    from stoker.integrations.megatron import StokerMegatronIterator

    kw = dict(seq_len=LONG, batch_size=2, rank=0, world_size=1, num_workers=1, pack="bestfit",
              pad_each_document_to=M)
    ref = next(iter(stoker.Loader(str(data), provenance=True, **kw)))
    micro = next(StokerMegatronIterator(stoker.Loader(str(data), output="torch", **kw)))
    some_padding = False
    for row in range(2):
        room, real = expected(ref["provenance"][row], True), expected(ref["provenance"][row], False)
        assert len(room) > 3, "a row of several documents"
        some_padding |= room != real
        end = int(micro["cu_seqlens_argmin"][row])
        assert int(micro["cu_seqlens_unpadded_argmin"][row]) == end == len(room)
        cu, unpadded = micro["cu_seqlens"][row], micro["cu_seqlens_unpadded"][row]
        assert cu[:end].tolist() == room and bool((cu[end:] == LONG).all())
        assert unpadded[:end].tolist() == real and bool((unpadded[end:] == real[-1]).all())
        assert int(micro["max_seqlen"][row]) == max(b - a for a, b in zip(room, room[1:]))
        # Megatron's THD path: the real boundaries as cu_seqlens, the padded as cu_seqlens_padded.
        one = {k: micro[k][row:row + 1] for k in ("tokens", "labels", "loss_mask",
                                                   "position_ids")}
        _, params = get_thd_batch_on_this_cp_rank(one, unpadded[:end], cu[:end],
                                                  micro["max_seqlen"][row], cp_size=1, cp_rank=0)
        assert params.cu_seqlens_q.tolist() == real
        assert params.cu_seqlens_q_padded.tolist() == room
        # Padding is never trained.
        for a, b, r in zip(room, room[1:], [x - y for x, y in zip(real[1:], real)]):
            assert not bool(micro["loss_mask"][row][a + r:b].any())
    assert some_padding, "padding was tested"
    # Without padding, the two stay equal (as before).
    plain = next(StokerMegatronIterator(stoker.Loader(str(data), output="torch", seq_len=LONG,
                                                      batch_size=2, num_workers=1)))
    assert torch.equal(plain["cu_seqlens_unpadded"], plain["cu_seqlens"])
