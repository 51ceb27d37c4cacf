"""stoker.calibrate and `stoker bench --calibrate`: the cost model fitted to a training step.

A synthetic step on a fake clock (its time is exactly a·ΣL + b·ΣL² + c·n) must give back a, b and
c; a real tiny transformer with document-masked attention (bench/tiny_transformer.py), timed on
CPU, must show a positive attention term b and a fit of R² >= R2_FLOOR; the CLI must fit a saved
file to the same numbers as Python, and refuse bad files naming the line.
"""

import json
import sys
import time
from pathlib import Path

import pytest

import stoker

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from tiny_transformer import TinyTransformer  # noqa: E402  (bench/, shared with balance_bench)

# The tiny transformer's fit, timed in process CPU time (one torch thread) so that the other
# processes of a shared machine do not enter it: R² 0.993-0.997 measured on a 2-core machine at
# load 10 (wall-clock time there gave 0.85-0.97); 0.9 leaves room.
R2_FLOOR = 0.9


class FakeClock:
    """Seconds that move only when the synthetic step says its microbatch took them."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def synthetic_step(clock, a, b, c, seen):
    def step(batch):
        cu = batch["cu_seqlens"].tolist()
        lengths = [e - s for s, e in zip(cu, cu[1:])]
        # The batch is packed as stoker's token steps pack it.
        assert batch["input_ids"].shape == (1, cu[-1])
        assert batch["seq_idx"].reshape(-1).tolist() == [
            k for k, n in enumerate(lengths) for _ in range(n)]
        assert batch["position_ids"].reshape(-1).tolist() == [
            i for n in lengths for i in range(n)]
        assert batch["max_seqlen"] == max(lengths)
        seen.append(lengths)
        clock.now += a * sum(lengths) + b * sum(n * n for n in lengths) + c * len(lengths)

    return step


def test_synthetic_step_recovers_a_b_c(tmp_path):
    clock, seen = FakeClock(), []
    a, b, c = 2e-6, 3e-10, 5e-5
    cal = stoker.calibrate(synthetic_step(clock, a, b, c, seen), max_tokens=4096, clock=clock,
                           repeats=2, warmup=1, progress=False, save=tmp_path / "t.jsonl")
    assert cal.a == pytest.approx(a, rel=1e-6)
    assert cal.b == pytest.approx(b, rel=1e-6)
    assert cal.c == pytest.approx(c, rel=1e-6)
    assert cal.r_squared == pytest.approx(1.0, abs=1e-9)
    assert max(abs(r) for r in cal.residuals) < 1e-9
    mixes = stoker.calibration_mixes(4096, seed=0)
    assert len(seen) == 1 + 2 * len(mixes)  # warm-up, then every mix twice
    assert [list(m) for m, _ in cal.samples] == mixes
    assert {len(m) for m in mixes} >= {1, 64}  # one long document ... many short ones
    assert {sum(m) for m in mixes} == {4096, 2048}
    # The string the Loader's model= and --model-config take.
    assert [float(x) for x in cal.model_string().split(",")] == [cal.a, cal.b, cal.c]
    assert cal.model_string() in repr(cal)
    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    assert len(lines) == len(mixes)
    assert json.loads(lines[0]) == {"lengths": mixes[0], "seconds": cal.samples[0][1]}


def test_mixes_are_deterministic_in_the_seed():
    assert stoker.calibration_mixes(8192, seed=3) == stoker.calibration_mixes(8192, seed=3)
    assert stoker.calibration_mixes(8192, seed=3) != stoker.calibration_mixes(8192, seed=4)
    assert all(sum(m) <= 8192 and min(m) >= 1 for m in stoker.calibration_mixes(8192))


def test_tiny_transformer_fit_has_attention_term():
    # One long document ... 64 short ones, at 1024 and 256 tokens (the default mixes, 22 of them,
    # take 10 s here; these 8 take 3 s).
    mixes = [[1024], [512] * 2, [128] * 8, [16] * 64, [512] + [128] * 4, [256], [64] * 4,
             [16] * 16]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(0)
        model = TinyTransformer(hidden=128, inter=344, vocab=1024)
        cal = stoker.calibrate(model.train_step, max_tokens=1024, mixes=mixes, repeats=2,
                               progress=False, vocab_size=model.vocab, clock=time.process_time)
    finally:
        torch.set_num_threads(threads)
    assert cal.b > 0, cal
    assert cal.r_squared >= R2_FLOOR, cal
    assert len(cal.residuals) == len(cal.samples) == len(mixes)


def test_cli_fit_equals_python_fit(tmp_path, run_stoker):
    clock, seen = FakeClock(), []
    times = tmp_path / "times.jsonl"
    cal = stoker.calibrate(synthetic_step(clock, 1e-6, 2e-10, 0.0, seen), max_tokens=2048,
                           clock=clock, repeats=1, warmup=0, progress=False, save=times)
    # Noise, so that the fit is not exact and any difference in the two fits would show.
    noisy = [json.loads(line) for line in times.read_text().splitlines()]
    for k, sample in enumerate(noisy):
        sample["seconds"] *= 1 + 0.03 * ((-1) ** k)
    times.write_text("".join(json.dumps(s) + "\n" for s in noisy))
    python_fit = stoker.CostModel.fit([(s["lengths"], s["seconds"]) for s in noisy])

    r = run_stoker("bench", "--calibrate", times, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["a"], out["b"], out["c"]) == (python_fit.a, python_fit.b, python_fit.c)
    assert out["r_squared"] == pytest.approx(python_fit.r_squared, rel=1e-12)
    assert out["samples"] == len(cal.samples)
    assert out["model_config"] == python_fit.model_string()  # shortest exact digits, both

    r = run_stoker("bench", "--calibrate", times)
    assert r.returncode == 0, r.stderr
    assert "--model-config " + out["model_config"] in r.stdout
    assert "R^2" in r.stdout


@pytest.mark.parametrize("lines, message", [
    (['{"lengths": [4], "seconds": 1}', "not json"], "line 2: not a JSON object"),
    (['{"lengths": [4], "seconds": 1}', "", '{"lengths": [4]}'], 'line 3: "seconds" must be a number'),
    (['{"lengths": [0, 4], "seconds": 1}'], 'line 1: "lengths" must hold whole numbers >= 1'),
    (['{"lengths": [], "seconds": 1}'], 'line 1: "lengths" must be a non-empty array'),
    (['{"lengths": [4], "seconds": -1}'], 'line 1: "seconds" must be finite and > 0'),
    (['{"lengths": [4], "seconds": 1}'], "at least 3"),
])
def test_cli_refuses_bad_files(tmp_path, run_stoker, lines, message):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    r = run_stoker("bench", "--calibrate", bad)
    assert r.returncode == 2
    assert message in r.stderr, r.stderr
    assert "stoker bench: error:" in r.stderr


def test_cli_calibrate_takes_no_dataset(tmp_path, run_stoker):
    times = tmp_path / "t.jsonl"
    times.write_text('{"lengths": [4], "seconds": 1}\n')
    r = run_stoker("bench", "--calibrate", times, "--synthetic")
    assert r.returncode == 2
    assert "give no DATASET or --synthetic" in r.stderr


def test_calibrate_refuses_bad_arguments():
    with pytest.raises(ValueError, match="max_tokens"):
        stoker.calibrate(lambda batch: None, max_tokens=1, progress=False)
    with pytest.raises(ValueError, match="summing to at most max_tokens=8"):
        stoker.calibrate(lambda batch: None, max_tokens=8, mixes=[[4, 5], [8], [1]],
                         progress=False)
    with pytest.raises(ValueError, match="at least 3 mixes"):
        stoker.calibrate(lambda batch: None, max_tokens=8, mixes=[[8], [4]], progress=False)


def test_progress_goes_to_stderr(capsys):
    clock, seen = FakeClock(), []
    stoker.calibrate(synthetic_step(clock, 1e-6, 1e-10, 0.0, seen), max_tokens=256, clock=clock,
                     repeats=2, warmup=0)
    out, err = capsys.readouterr()
    assert out == ""
    assert "stoker.calibrate: repeat 2/2" in err
    assert "model='" in err


def test_loader_and_plan_take_the_model_string(tmp_path, run_stoker):
    clock, seen = FakeClock(), []
    cal = stoker.calibrate(synthetic_step(clock, 2e-6, 4e-9, 1e-5, seen), max_tokens=1024,
                           clock=clock, repeats=1, warmup=0, progress=False)
    src = tmp_path / "docs.jsonl"
    with open(src, "w") as f:
        for n in [30, 700, 12, 300, 90, 1000, 5, 64] * 8:
            f.write(json.dumps({"text": "x" * n}) + "\n")
    stoker.pack([src], tmp_path / "ds", "bytes")
    loader = stoker.Loader(str(tmp_path / "ds"), tokens_per_step=4096, microbatches=2,
                           max_tokens_per_microbatch=1024, balance="attention",
                           model=cal.model_string(), output="numpy")
    assert sum(int(b["input_ids"].size) > 0 for b in loader) > 0
    r = run_stoker("plan", tmp_path / "ds", "--seq-len", "1024", "--batch-size", "1",
                   "--tokens-per-step", "4K", "--world-size", "2", "--balance", "attention",
                   "--model-config", cal.model_string(), "--stats")
    assert r.returncode == 0, r.stderr
    assert "balanced" in r.stdout
