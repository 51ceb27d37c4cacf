"""torch is optional: `import stoker` and the NumPy paths (Loader and Stream with
output="numpy", Tokenizer, pack, plan, inspect, gather_state_dicts) never import it, and work when
torch cannot be imported at all; torch output then fails with an ImportError naming torch.

Each case runs in a fresh interpreter (this test process has torch imported already)."""

import json
import subprocess
import sys
import textwrap

# Runs in the child: packs a small dataset, iterates NumPy loaders over it and a stream, encodes
# with a Tokenizer, and prints what it saw as JSON.
NUMPY_PATHS = """
import json, sys
import numpy as np
import stoker

src, out, jsonl_dir = sys.argv[1], sys.argv[2], sys.argv[3]
stoker.pack([src], out, "bytes", num_workers=1, shard_size="4KiB")
loader = stoker.Loader(out, seq_len=32, batch_size=2, num_workers=1, output="numpy", seed=1)
batches = [{k: v.copy() for k, v in b.items()} for b in loader]
assert batches and all(isinstance(b["input_ids"], np.ndarray) for b in batches)
assert len(batches) == len(loader) == stoker.plan(out, seq_len=32, batch_size=2, seed=1).steps_per_epoch(0)
state = stoker.gather_state_dicts(loader)
stream = stoker.Loader(stoker.Stream(jsonl_dir + "/*.jsonl", shuffle_buffer=8, steps_per_epoch=3),
                       seq_len=16, batch_size=2, num_workers=1, output="numpy")
stream_batches = [b["input_ids"].copy() for b in stream]
ids = stoker.Tokenizer("bytes").encode("héllo", numpy=True)
synthetic = next(iter(stoker.Loader.synthetic(seq_len=8, batch_size=1, output="numpy", steps=1)))
print(json.dumps({
    "torch_imported": "torch" in sys.modules,
    "batches": len(batches), "first": batches[0]["input_ids"][0].tolist(),
    "stream_batches": len(stream_batches), "states": len(state), "ids": ids.tolist(),
    "synthetic": type(synthetic["input_ids"]).__name__,
    "documents": stoker.inspect(out)["documents"],
}))
"""

# Put first in the child: makes torch unimportable, as on a machine without it.
BLOCK_TORCH = """
import sys
class _NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError(f"blocked by the test: {name}")
        return None
sys.meta_path.insert(0, _NoTorch())
"""

# Runs in the child with torch blocked: the default output is NumPy, torch output and the torch
# adapter fail with ImportErrors that name torch.
TORCH_ERRORS = """
import json, sys
import stoker

out = sys.argv[1]
default = stoker.Loader(out, seq_len=32, batch_size=2, num_workers=1)
kind = type(next(iter(default))["input_ids"]).__module__
errors = {}
for name, make in [("output", lambda: stoker.Loader(out, seq_len=32, batch_size=2, output="torch")),
                   ("synthetic", lambda: stoker.Loader.synthetic(output="torch")),
                   ("adapter", lambda: stoker.TorchIterableDataset)]:
    try:
        make()
        errors[name] = None
    except ImportError as e:
        errors[name] = str(e)
print(json.dumps({"default_module": kind, "errors": errors}))
"""


def write_inputs(tmp_path):
    text_dir = tmp_path / "text"
    text_dir.mkdir()
    docs = [{"text": f"document {i} " + "abcdefgh" * (i % 7 + 1)} for i in range(60)]
    for part in range(2):
        with open(text_dir / f"part-{part}.jsonl", "w") as f:
            for d in docs[part::2]:
                f.write(json.dumps(d) + "\n")
    return text_dir


def run_child(code, *args):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def numpy_paths_ran(seen, dataset_docs):
    assert seen["batches"] > 3 and seen["stream_batches"] == 3
    assert seen["documents"] == dataset_docs and seen["states"] == 1
    assert seen["ids"] == list("héllo".encode())
    assert seen["synthetic"] == "ndarray"
    assert all(0 <= t < 256 for t in seen["first"])


def test_numpy_paths_do_not_import_torch(tmp_path):
    text_dir = write_inputs(tmp_path)
    seen = run_child(NUMPY_PATHS, text_dir / "part-0.jsonl", tmp_path / "ds", text_dir)
    numpy_paths_ran(seen, 30)
    assert seen["torch_imported"] is False


def test_numpy_paths_work_without_torch_and_torch_output_names_it(tmp_path):
    text_dir = write_inputs(tmp_path)
    blocked = run_child(BLOCK_TORCH + NUMPY_PATHS, text_dir / "part-0.jsonl", tmp_path / "ds",
                        text_dir)
    numpy_paths_ran(blocked, 30)
    # The same data as with torch importable.
    free = run_child(NUMPY_PATHS, text_dir / "part-0.jsonl", tmp_path / "ds2", text_dir)
    assert blocked["first"] == free["first"]

    seen = run_child(BLOCK_TORCH + TORCH_ERRORS, tmp_path / "ds")
    assert seen["default_module"] == "numpy"
    for name, message in seen["errors"].items():
        assert message is not None, f"{name}: no ImportError without torch"
        assert "torch" in message, (name, message)
    assert "output='numpy'" in seen["errors"]["output"]
