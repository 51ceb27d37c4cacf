"""Helpers for the test_records_*.py tests: our record readers through `stoker records --dump`,
pack through `stoker pack`, and the mosaicml-streaming import (which needs a stub for the
transformers/torchvision imports that its package __init__ makes but local MDS never uses)."""
import importlib.abc
import importlib.machinery
import json
import sys
import types

from test_pack import pack, read_dataset, run  # noqa: F401  (re-exported for the records tests)


def dump(*inputs, input_format=None):
    """Our reader's records: a list of (key bytes, {field name: value}), bytes fields as bytes
    (a list of bytes for TFRecord bytes lists with other than one value), numbers as lists."""
    args = ["records", "--dump", *inputs]
    if input_format:
        args += ["--input-format", input_format]
    p = run(*args)
    assert p.returncode == 0, p.stderr
    out = []
    for line in p.stdout.splitlines():
        r = json.loads(line)
        fields = {}
        for f in r["fields"]:
            name = bytes.fromhex(f["name_hex"]).decode("utf-8", "surrogateescape")
            if "hex" in f:
                values = [bytes.fromhex(h) for h in f["hex"]]
                fields[name] = values[0] if len(values) == 1 else values
            else:
                fields[name] = f.get("ints", f.get("floats"))
        out.append((bytes.fromhex(r["key_hex"]), fields))
    return out


def jsonl_documents(tmp_path, texts):
    """The documents of `stoker pack` of `texts` as JSONL (the bytes tokenizer): what packing the
    same texts from any record format must give."""
    path = tmp_path / "same-texts.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    pack(path, "-o", tmp_path / "same-texts-packed")
    return read_dataset(tmp_path / "same-texts-packed")[1]


def packed_documents(tmp_path, name, *args):
    """The documents of `stoker pack ARGS -o tmp_path/name`."""
    pack(*args, "-o", tmp_path / name)
    return read_dataset(tmp_path / name)[1]


def error_of(*args):
    """Runs the CLI expecting the bad-input exit code 2; returns stderr."""
    p = run(*args)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    return p.stderr


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Empty modules for transformers/torchvision: streaming/__init__ imports them (for its text
    and vision dataset classes) although MDSWriter and the MDS reader never use them."""
    roots = ("transformers", "torchvision")

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []

        def getattr_(attr):
            if attr.startswith("__"):
                raise AttributeError(attr)
            return type(attr, (object,), {})

        module.__getattr__ = getattr_
        return module

    def exec_module(self, module):
        pass


def import_streaming():
    """The mosaicml-streaming package (installed with --no-deps, see scripts/requirements-dev-nodeps.txt)."""
    missing = []
    for root in _StubFinder.roots:  # stub only what is not installed (transformers may be)
        try:
            __import__(root)
        except ImportError:
            missing.append(root)
    if missing:
        finder = _StubFinder()
        finder.roots = tuple(missing)
        sys.meta_path.insert(0, finder)
    import streaming
    return streaming
