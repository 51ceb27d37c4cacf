"""stoker.balance, stoker.CostModel and stoker.assign_slots (python/src/stoker/_balance.py)."""

import json
from pathlib import Path

import numpy as np
import pytest

import stoker

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "model_configs"


def long_tailed(n, seed, cap=32768):
    rng = np.random.default_rng(seed)
    return np.minimum(np.ceil(rng.lognormal(np.log(600), 1.2, n)), cap).astype(np.int64)


def check_partition(groups, n, k):
    assert len(groups) == k
    sizes = sorted(len(g) for g in groups)
    assert sizes[0] >= n // k and sizes[-1] <= -(-n // k)
    assert sum(1 for g in groups if len(g) == n // k + 1) == (n % k if n % k else 0)
    flat = sorted(i for g in groups for i in g)
    assert flat == list(range(n))
    assert all(g == sorted(g) for g in groups)


def max_over_mean(groups, costs):
    sums = np.array([costs[g].sum() for g in groups])
    return sums.max() / sums.mean()


def test_cost_model_from_real_configs_matches_hand_counts():
    # Hand counts in src/plan/cost_model_test.cc: forward linear FLOPs per token plus causal
    # attention's 2·heads·head_dim·layers per L² and per L, times 3 for forward + backward.
    llama = stoker.CostModel.from_config(CONFIGS / "llama-3.1-8b" / "config.json")
    assert llama.a == 3 * (15_009_316_864 + 262_144)
    assert llama.b == 3 * 262_144
    qwen = stoker.CostModel.from_config(CONFIGS / "qwen2.5-0.5b")  # a model directory
    assert (qwen.a, qwen.b, qwen.c) == (3 * (987_922_432 + 43_008), 3 * 43_008, 0)
    assert qwen.cost(1000) == qwen.a * 1000 + qwen.b * 1000 * 1000


def test_cost_model_errors_name_the_file(tmp_path):
    moe = tmp_path / "config.json"
    moe.write_text(json.dumps({"model_type": "mixtral", "num_local_experts": 8}))
    with pytest.raises(ValueError, match=r"config.json: a mixture of experts"):
        stoker.CostModel.from_config(moe)
    with pytest.raises(FileNotFoundError):
        stoker.CostModel.from_config(tmp_path / "missing")
    with pytest.raises(ValueError, match="'b' must be"):
        stoker.CostModel(1.0, -2.0)
    with pytest.raises(ValueError, match="all 0"):
        stoker.CostModel(0, 0, 0)


def test_balance_equal_counts_exactly_once_and_deterministic():
    lengths = long_tailed(1003, 1)
    for k in (1, 3, 8, 64, 2000):
        groups = stoker.balance(lengths, k, cost=(3e9, 1.3e5))
        check_partition(groups, len(lengths), k)
        assert stoker.balance(lengths, k, cost=(3e9, 1.3e5)) == groups
    # A list works as well as an array, and the spellings of a cost agree.
    as_list = stoker.balance(lengths.tolist(), 8, cost=stoker.CostModel(3e9, 1.3e5))
    assert as_list == stoker.balance(lengths, 8, cost=lambda L: 3e9 * L + 1.3e5 * L * L)


def test_balance_long_tailed_65536_into_512():
    lengths = long_tailed(65536, 45)
    model = stoker.CostModel.from_config(CONFIGS / "qwen2.5-0.5b")
    groups = stoker.balance(lengths, 512, cost=model)
    check_partition(groups, len(lengths), 512)
    costs = model.cost(lengths)
    assert max_over_mean(groups, costs) <= 1.02
    dealt = [list(range(r, len(lengths), 512)) for r in range(512)]
    assert max_over_mean(dealt, costs) > 1.3  # what ignoring the cost gives


def test_balancing_tokens_leaves_attention_cost_uneven():
    # Groups of equal tokens are not groups of equal cost: the L² term of attention differs.
    lengths = long_tailed(4096, 3)
    model = stoker.CostModel.from_config(CONFIGS / "qwen2.5-0.5b")
    costs = model.cost(lengths)
    by_tokens = stoker.balance(lengths, 64)
    by_cost = stoker.balance(lengths, 64, cost=model)
    assert max_over_mean(by_tokens, lengths.astype(float)) < 1.01
    assert max_over_mean(by_cost, costs) < 1.01
    assert max_over_mean(by_tokens, costs) > max_over_mean(by_cost, costs) + 0.02


def test_balance_rejects_bad_input():
    with pytest.raises(ValueError, match="k must be at least 1"):
        stoker.balance([1, 2], 0)
    with pytest.raises(ValueError, match=">= 0"):
        stoker.balance([1, -2], 2)
    with pytest.raises(ValueError, match="has cost"):
        stoker.balance([1, 2], 2, cost=lambda L: -L.astype(float))
    with pytest.raises(TypeError, match="cost: expected"):
        stoker.balance([1, 2], 2, cost=3)


def test_assign_slots_budget_and_exactly_once():
    lengths = np.clip(long_tailed(3000, 7), 1, 8192)
    out = stoker.assign_slots(lengths, 8, 8192, cost=(3e9, 1.3e5))
    assert out["ranks"] == 8
    m = out["microbatches"]
    assert len(out["slots"]) == 8 * m
    assert sorted(i for s in out["slots"] for i in s) == list(range(len(lengths)))
    for slot, tokens in zip(out["slots"], out["slot_tokens"]):
        assert tokens == lengths[slot].sum() <= 8192
    rank_cost = np.array(out["slot_cost"]).reshape(8, m).sum(axis=1)
    assert rank_cost.max() / rank_cost.mean() < 1.02
    with pytest.raises(ValueError, match="document 0 has 9000 tokens"):
        stoker.assign_slots([9000], 1, 8192)


def test_fit_recovers_a_cost_model():
    truth = stoker.CostModel(2e-6, 3e-10, 1e-4)
    samples = []
    for total in (512, 2048, 8192):
        for docs in (1, 4, 16):
            lengths = [total // docs + i for i in range(docs)]
            samples.append((lengths, float(truth.cost(np.array(lengths)).sum())))
    fit = stoker.CostModel.fit(samples)
    assert fit.a == pytest.approx(truth.a, rel=1e-6)
    assert fit.b == pytest.approx(truth.b, rel=1e-6)
    assert fit.c == pytest.approx(truth.c, rel=1e-6)
    assert fit.r_squared == pytest.approx(1.0)
    with pytest.raises(ValueError, match="at least 3"):
        stoker.CostModel.fit(samples[:2])
