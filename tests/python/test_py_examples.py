"""The two Python examples run and pass their own checks: a tiny GPT with checkpoint/resume, and
torchrun with 2 and 3 processes (gloo): same step counts, disjoint data."""

import subprocess
import sys
from pathlib import Path

import pytest

from test_py_data import torchrun_env_and_port

REPO = Path(__file__).resolve().parents[2]


def test_train_tiny_gpt_resumes_with_the_same_batches(tmp_path):
    out = subprocess.run([sys.executable, str(REPO / "examples" / "train_tiny_gpt.py"),
                          "--steps", "8", "--checkpoint-at", "3", "--workdir", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "same batches: True, same losses: True" in out.stdout
    assert (tmp_path / "ckpt.pt").is_file()


@pytest.mark.parametrize("nproc", [2, 3])
def test_distributed_example_under_torchrun(nproc):
    # With 3 ranks the final concat row is partial: its padding (pad_token_id 0, also a real
    # token id of the data) must not count as a token seen twice.
    torchrun = Path(sys.executable).with_name("torchrun")
    env, port = torchrun_env_and_port()
    out = subprocess.run([str(torchrun), "--nproc_per_node", str(nproc), "--master_addr", "127.0.0.1",
                          "--master_port", str(port),
                          str(REPO / "examples" / "distributed.py"), "--epochs", "2"],
                         capture_output=True, text=True, timeout=180, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    epochs = [line for line in out.stdout.splitlines() if line.startswith("epoch ")]
    assert len(epochs) == 2
    assert all("same steps True, disjoint True" in line for line in epochs)
    assert "checkpoint identical on every rank: True" in out.stdout
