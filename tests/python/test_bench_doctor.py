"""stoker bench and stoker doctor, end to end on real token files (.npy written with numpy).

The bench is the loader-only experiment; doctor compares it with what training consumes (the 1.2x
rule). The stall monitor is exercised through `bench --consumer-step-ms`, which sleeps a simulated
training step per batch: a step far shorter than the loader needs must warn, a long one must not.
"""

import json

import numpy as np
import pytest

FIGURES = [
    "warmup_batches", "batches", "wall_s", "samples_per_s", "tokens_per_s", "real_tokens_per_s",
    "real_token_share", "trained_token_share",
    "mb_per_s", "time_to_first_batch_s", "cpu_s", "cpu_cores_used", "peak_rss_bytes", "read_s",
    "tokenize_s", "assemble_s", "copy_s", "consumer_wait_s", "stall_share", "wait_max_ms",
]
SMALL = ["--seq-len", "512", "--batch-size", "8", "--num-workers", "2", "--warmup-batches", "3"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """1,000 documents of 2,048 uint16 tokens (2 M tokens, 4 MB) as a 2-D .npy file."""
    path = tmp_path_factory.mktemp("bench") / "tokens.npy"
    rng = np.random.default_rng(5)
    np.save(path, rng.integers(0, 50000, size=(1000, 2048), dtype=np.uint16))
    return str(path)


def bench_json(run_stoker, *args):
    r = run_stoker("bench", *args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_bench_json_holds_every_figure(run_stoker, dataset):
    j = bench_json(run_stoker, dataset, *SMALL, "--batches", "30")
    for key in FIGURES:
        assert key in j, key
    assert j["warmup_excluded"] is True
    assert j["warmup_batches"] == 3 and j["batches"] == 30
    assert j["tokens"] == 30 * 8 * 512
    assert j["tokens_per_s"] == pytest.approx(j["tokens"] / j["wall_s"], rel=1e-9)
    assert j["samples_per_s"] * 512 == pytest.approx(j["tokens_per_s"], rel=1e-9)
    # Every position is a real token here (documents fill rows); each is 2 bytes in the file.
    assert j["mb_per_s"] == pytest.approx(j["real_tokens_per_s"] * 2 / 1e6, rel=1e-9)
    assert j["time_to_first_batch_s"] > 0
    assert j["peak_rss_bytes"] > 1 << 20
    assert j["cpu_s"] >= 0 and j["cpu_s"] == pytest.approx(j["cpu_user_s"] + j["cpu_system_s"])
    assert j["tokenize_s"] is None  # pretokenized data: no tokenize stage
    assert j["copy_s"] is None      # no device: no host->device copy
    assert j["read_s"] > 0 and j["assemble_s"] > 0
    assert j["setting"]["workers"] == 2 and j["setting"]["shuffle"] == "global"


def test_bench_table_warmup_and_progress(run_stoker, dataset):
    r = run_stoker("bench", dataset, *SMALL, "--batches", "20")
    assert r.returncode == 0, r.stderr
    assert "warm-up excluded: the first 3 batches" in r.stdout
    for label in ["samples/s", "tokens/s", "MB/s read", "time to first batch", "peak RSS",
                  "CPU time (user + system)", "read", "tokenize", "assemble",
                  "host->device copy", "consumer wait (data stall)"]:
        assert label in r.stdout, label
    # Not a terminal: plain progress lines on stderr, the first once warm-up starts.
    assert "bench: first batch after" in r.stderr


def test_bench_synthetic_reads_nothing(run_stoker):
    j = bench_json(run_stoker, "--synthetic", "--seq-len", "256", "--batch-size", "4",
                   "--batches", "50")
    assert j["batches"] == 50 and j["mb_per_s"] == 0 and j["setting"]["synthetic"] is True


@pytest.mark.parametrize(
    "args, message",
    [
        (["--batches", "10", "--seconds", "1"], "excludes"),
        (["--batches", "-3"], "--batches"),
        (["--seconds", "0"], "--seconds"),
        (["--batch-size", "0"], "--batch-size"),
        (["--num-workers", "-1"], "--num-workers"),
        (["--shuffle", "random"], "--shuffle"),
        (["--rank", "2", "--world-size", "2"], "--rank 2 must be below --world-size 2"),
        (["--synthetic"], "--synthetic serves a fixed batch"),
    ],
)
def test_bench_bad_options(run_stoker, dataset, args, message):
    r = run_stoker("bench", dataset, *args)
    assert r.returncode == 2, r.stdout
    assert message in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_bench_missing_dataset(run_stoker, tmp_path):
    missing = tmp_path / "nope.npy"
    r = run_stoker("bench", str(missing), "--batches", "5")
    assert r.returncode == 2
    assert str(missing) in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_monitor_warns_when_the_source_cannot_keep_up(run_stoker, dataset):
    # 256 x 2048 tokens per 1 ms step: ~524 M tokens/s (16.8 GB/s of int64 outputs), far beyond
    # one worker thread. The step is a real one (the monitor ignores loops that train nothing).
    r = run_stoker("bench", dataset, "--seq-len", "2048", "--batch-size", "256", "--num-workers", "1",
                   "--warmup-batches", "2", "--batches", "1000", "--consumer-step-ms", "1",
                   "--json")
    assert r.returncode == 0, r.stderr
    warnings = [l for l in r.stderr.splitlines() if l.startswith("stoker: warning:")]
    assert len(warnings) == 1, r.stderr  # rate-limited: once
    assert "below 1.20x" in warnings[0]
    assert json.loads(r.stdout)["monitor_warnings"] == 1


def test_monitor_quiet_when_the_consumer_is_slower(run_stoker, dataset):
    # 2 x 256 tokens per 20 ms step: the loader has orders of magnitude of headroom.
    r = run_stoker("bench", dataset, "--seq-len", "256", "--batch-size", "2", "--num-workers", "1",
                   "--warmup-batches", "2", "--batches", "20", "--consumer-step-ms", "20",
                   "--json")
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr
    j = json.loads(r.stdout)
    assert j["monitor_warnings"] == 0
    assert j["stall_share"] < 0.2


def doctor_json(run_stoker, *args):
    r = run_stoker("doctor", *args, "--json")
    assert r.returncode in (0, 1), r.stderr
    j = json.loads(r.stdout)
    assert r.returncode == (0 if j["pass"] else 1)
    # The verdict follows from the doctor's own measurement and the rule.
    assert j["ratio"] == pytest.approx(j["delivered_tokens_per_s"] / j["consumed_tokens_per_s"])
    assert j["pass"] == (j["ratio"] >= 1.2)
    assert j["verdict"] == ("PASS" if j["pass"] else "FAIL")
    assert j["bench"]["tokens_per_s"] == j["delivered_tokens_per_s"]
    return j


def test_doctor_model_rule_arithmetic(run_stoker, dataset):
    j = doctor_json(run_stoker, dataset, *SMALL, "--batches", "10", "--model-params", "1.3B",
                    "--gpus", "8", "--gpu", "h100", "--mfu", "0.4")
    # 8 x 0.4 x 989e12 / (6 x 1.3e9)
    assert j["consumed_tokens_per_s"] == pytest.approx(405743.59, rel=1e-6)
    assert j["consumed_samples_per_s"] == pytest.approx(405743.59 / 512, rel=1e-6)
    assert j["peak_flops_per_gpu"] == 989e12 and j["flops_per_token"] == 6 * 1.3e9
    assert "6 x N" in j["consumption"]


def test_doctor_verdict_against_the_measured_rate(run_stoker, dataset):
    # Whole seconds, not a few batches: this loader delivers 40 small batches in about a ms.
    measured = bench_json(run_stoker, dataset, *SMALL, "--seconds", "1")["tokens_per_s"]
    at_rule = measured / 1.2  # the consumption at which the ratio is exactly 1.2x
    # Far on either side of the rule the outcome is fixed, whatever the machine's noise.
    easy = doctor_json(run_stoker, dataset, *SMALL, "--seconds", "1",
                       "--train-tokens-per-s", str(at_rule / 4))
    assert easy["pass"]
    hard = doctor_json(run_stoker, dataset, *SMALL, "--seconds", "1",
                       "--train-tokens-per-s", str(at_rule * 4))
    assert not hard["pass"]
    assert hard["slowest_stage"] in ("read", "assemble")
    assert any("faster" in a for a in hard["advice"])
    # Just above and just below: the verdict must match the ratio the doctor measured.
    for factor in (0.9, 1.1):
        doctor_json(run_stoker, dataset, *SMALL, "--seconds", "1",
                    "--train-tokens-per-s", str(at_rule * factor))


def test_doctor_text_output(run_stoker, dataset):
    r = run_stoker("doctor", dataset, *SMALL, "--batches", "10", "--train-samples-per-s", "1")
    assert r.returncode == 0, r.stderr
    assert "verdict: PASS" in r.stdout
    assert "ratio delivered / consumed" in r.stdout
    assert "slowest stage:" in r.stdout
    assert "= 512 tokens/s" in r.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--model-params", "1.3B", "--gpus", "8", "--gpu", "gtx480"], "unknown GPU type 'gtx480'"),
        (["--train-tokens-per-s", "-5"], "--train-tokens-per-s"),
        ([], "give exactly one of"),
        (["--train-tokens-per-s", "5", "--train-samples-per-s", "5"], "excludes"),
        (["--model-params", "1.3B"], "--model-params needs --gpus"),
        (["--model-params", "lots", "--gpus", "1"], "model size 'lots'"),
        (["--model-params", "1B", "--gpus", "1", "--mfu", "2"],
         "--mfu: must be a number > 0 and ≤ 1, got '2'"),
        (["--train-tokens-per-s", "5", "--seconds", "1", "--batches", "3"], "excludes"),
    ],
)
def test_doctor_bad_input(run_stoker, dataset, args, message):
    r = run_stoker("doctor", dataset, *args)
    assert r.returncode == 2, r.stdout
    assert message in r.stderr


def test_doctor_missing_dataset(run_stoker, tmp_path):
    r = run_stoker("doctor", str(tmp_path / "absent"), "--train-tokens-per-s", "1000")
    assert r.returncode == 2
    assert "absent" in r.stderr
