"""stoker.Plan.restore honours a state's edits as the Loader does (docs/plan.md, "Skipping steps on
resume"): at a state whose skip begins where it stands, the restored position is past the skipped
steps, so walking the plan from there never gives their pieces and gives the rest of the epoch
once; a state that drops a dataset the plan still has is refused, naming it."""

from collections import Counter

import pytest

import stoker
from test_mixture_schedule import mix  # noqa: F401
from test_py_data import datasets  # noqa: F401

SEQ, BATCH = 64, 2


def walk(plan, epoch, step):
    """Every piece of steps `step`.. of `epoch` (both ranks), as a Counter."""
    out = Counter()
    for s in range(step, plan.steps_per_epoch(epoch)):
        for rank in (0, 1):
            for row in plan.batch(epoch, s, rank=rank)["rows"]:
                out.update(tuple(p) for p in row)
    return out


def test_restore_at_an_edited_state_is_past_its_skip_and_the_rest_is_walked_once(
        datasets):  # noqa: F811
    plan = stoker.plan(datasets["a"], SEQ, BATCH, world_size=2, seed=3)
    n = plan.steps_per_epoch(0)
    assert n > 10
    state = plan.state_dict(0, 4 * plan.global_batch_rows)  # after step 3
    assert plan.restore(state) == (0, 4 * plan.global_batch_rows)
    edited = stoker.edit_state(state, skip_steps=(4, 7))
    epoch, rows = plan.restore(edited)
    assert (epoch, rows) == (0, 8 * plan.global_batch_rows)  # the first step after the skip
    skipped = walk(plan, 0, 4) - walk(plan, 0, 8)
    assert sum(skipped.values()) > 0
    rest = walk(plan, epoch, rows // plan.global_batch_rows)
    assert not set(rest) & set(skipped)  # never a skipped step's piece
    assert rest + skipped == walk(plan, 0, 4)  # and every other piece of the epoch once
    # A skip to the epoch's end: the next epoch's start.
    assert plan.restore(stoker.edit_state(state, skip_steps=(4, n - 1))) == (1, 0)
    # A skip ahead of the position is not reached yet: the position as saved.
    assert plan.restore(stoker.edit_state(state, skip_steps=(6, 7)))[1] == \
        4 * plan.global_batch_rows


def test_restore_refuses_a_state_that_drops_a_dataset_of_the_plan(mix):  # noqa: F811
    plan = stoker.plan(stoker.Mixture(mix["path"]), SEQ, BATCH, world_size=2, seed=3,
                       total_steps=100)
    state = plan.state_dict(0, 2 * plan.global_batch_rows)
    assert plan.restore(state) == (0, 2 * plan.global_batch_rows)
    edited = stoker.edit_state(state, drop_source="code")
    with pytest.raises(ValueError, match="drops dataset 'code'.*without it"):
        plan.restore(edited)
