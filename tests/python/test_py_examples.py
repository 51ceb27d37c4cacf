"""Every example that the docs cite runs and passes its own checks: a tiny GPT with
checkpoint/resume; chat fine-tuning on the answers only, in a plain loop and in a Hugging Face Trainer; torchrun with 2 and 3 processes (gloo): same step counts, disjoint data; an
elastic resume of a stream from 3 ranks to 2 (no token twice); and the two C++ programs
(examples/*.cc, built beside the CLI) over a packed sample dataset."""

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


def test_finetune_chat_trains_on_the_answers_only(tmp_path):
    out = subprocess.run([sys.executable, str(REPO / "examples" / "finetune_chat.py"),
                          "--steps", "20", "--workdir", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "masks match labels: True" in out.stdout
    assert (tmp_path / "sft" / "loss_mask" / "manifest.json").is_file()


def test_hf_trainer_recipe_keeps_attention_inside_conversations(tmp_path):
    out = subprocess.run([sys.executable, str(REPO / "examples" / "hf_trainer_chat.py"),
                          "--steps", "6", "--workdir", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert ("model loss equals stoker labels by hand: True; attention inside each "
            "conversation: True; trained 6 steps") in out.stdout, out.stdout
    assert "resumed on the next batch: True" in out.stdout, out.stdout


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


def test_elastic_stream_example_resumes_on_another_world_size(tmp_path):
    torchrun = Path(sys.executable).with_name("torchrun")
    outs = []
    for phase, nproc in (("save", 3), ("resume", 2)):
        env, port = torchrun_env_and_port()
        out = subprocess.run([str(torchrun), "--nproc_per_node", str(nproc), "--master_addr",
                              "127.0.0.1", "--master_port", str(port),
                              str(REPO / "examples" / "elastic_stream.py"), "--workdir",
                              str(tmp_path), "--phase", phase, "--steps", "5"],
                             capture_output=True, text=True, timeout=300, env=env)
        assert out.returncode == 0, out.stdout + out.stderr
        outs.append(out.stdout)
    assert "saved 3 states after 5 steps on every rank" in outs[0]
    assert "elastic resume 3 -> 2:" in outs[1] and "tokens delivered twice: 0" in outs[1]


@pytest.fixture(scope="module")
def sample_dataset(tmp_path_factory, stoker_cli):
    out = tmp_path_factory.mktemp("examples") / "sample"
    packed = subprocess.run([stoker_cli, "pack", str(REPO / "data" / "sample" / "corpus.jsonl"),
                             "-o", str(out), "--tokenizer", "bytes"],
                            capture_output=True, text=True, timeout=300)
    assert packed.returncode == 0, packed.stderr
    return out


def example_binary(stoker_cli, name):
    binary = Path(stoker_cli).parent / f"example_{name}"
    assert binary.is_file(), f"{binary} is not built (it is built beside the stoker CLI)"
    return str(binary)


def test_cpp_load_batches_example_prints_its_batches(stoker_cli, sample_dataset):
    out = subprocess.run([example_binary(stoker_cli, "load_batches"), str(sample_dataset),
                          "16", "2", "3"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "input_ids" in out.stdout, out.stdout


def test_cpp_synthetic_step_example_times_both_loaders(stoker_cli, sample_dataset):
    out = subprocess.run([example_binary(stoker_cli, "synthetic_step"), str(sample_dataset), "1"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "synthetic batch:" in out.stdout and "real loader:" in out.stdout, out.stdout
