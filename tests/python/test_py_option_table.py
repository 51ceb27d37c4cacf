"""Every option is declared once, in its struct's option table (common/option_table.h), and every
surface agrees with the table: each member of the C++ struct has a row; each row's Python keyword
is in the Python signature with the same default; each row's CLI flag is in --help with the same
default; each Python keyword of the loader is in docs/python.md. A new field of PlanOptions,
LoaderOptions, StreamOptions, TokenizerOptions or PackArgs without a row, or a surface that drops
or re-types an option, fails here."""

import inspect
import re
import subprocess
from pathlib import Path

import pytest

import stoker
from stoker import _stoker

ROOT = Path(__file__).resolve().parents[2]

# (table, header, struct): the table lists exactly the struct's members (the loader's also the
# plan's, its base).
STRUCTS = [
    ("plan", "include/stoker/plan.h", "PlanOptions"),
    ("loader", "include/stoker/loader.h", "LoaderOptions"),
    ("stream", "include/stoker/stream.h", "StreamOptions"),
    ("tokenizer", "include/stoker/tokenizer.h", "TokenizerOptions"),
    ("pack", "src/ingest/pack_args.h", "PackArgs"),
]


def struct_members(header: str, struct: str) -> list:
    """The data members of `struct` in `header`, in order (declarations ending in ';' at the
    struct's own depth; functions, constructors and static members left out)."""
    text = re.sub(r"//[^\n]*", "", (ROOT / header).read_text())
    start = re.search(rf"^struct {struct}\b[^{{]*\{{", text, re.M)
    assert start, f"struct {struct} not found in {header}"
    depth, body = 1, []
    for c in text[start.end():]:
        depth += {"{": 1, "}": -1}.get(c, 0)
        if depth == 0:
            break
        if depth == 1:
            body.append(";" if c == "}" else c)  # an inline body ends its declaration
    members = []
    for decl in "".join(body).split(";"):
        decl = re.sub(r"\s*=\s*[^,]+", "", decl.strip())  # "= value" initialisers
        while re.search(r"<[^<>]*>", decl):
            decl = re.sub(r"<[^<>]*>", "", decl)  # template arguments (std::function<void(...)>)
        if not decl or "(" in decl or decl.startswith(("static", "using", "friend")):
            continue
        names = [part.strip().split()[-1] for part in decl.split(",")]
        members += [n.lstrip("*&") for n in names]
    return members


def table(name):
    return _stoker.option_table(name)


@pytest.mark.parametrize("name,header,struct", STRUCTS)
def test_every_member_of_the_struct_has_a_row(name, header, struct):
    rows = [r["name"] for r in table(name)]
    if name == "loader":  # a PlanOptions: the plan's rows first
        plan = [r["name"] for r in table("plan")]
        assert rows[:len(plan)] == plan
        rows = rows[len(plan):]
    assert rows == struct_members(header, struct)


def test_the_member_reader_sees_a_missing_member():
    """The check above can fail: the reader finds members the tables must then list."""
    members = struct_members("include/stoker/loader.h", "LoaderOptions")
    assert {"num_workers", "monitor_sink", "cache_size_bytes", "seq_idx"} <= set(members)
    assert "LoaderOptions" not in members
    assert struct_members("include/stoker/stream.h", "StreamOptions")[-4:] == [
        "train_on", "chat_template", "chat_field", "chat_template_kwargs"]


def python_default_agrees(row, default):
    """None in Python means "the C++ default" (num_workers, device, bestfit_window, ...)."""
    if default is inspect.Parameter.empty or default is None:
        return True
    if row["default"] is None:  # kOther rows (task_index, ...): no text form to compare
        return True
    return type(default) is type(row["default"]) and default == row["default"]


# Each table's Python surfaces: the functions whose keywords are its rows.
PYTHON_SURFACES = {
    "plan": [stoker.plan],
    "loader": [stoker.Loader.__init__],
    "stream": [stoker.Stream.__init__],
    "tokenizer": [stoker.Tokenizer.__init__, stoker.Stream.__init__, stoker.pack],
    "pack": [stoker.pack],
}


@pytest.mark.parametrize("name", sorted(PYTHON_SURFACES))
def test_python_keywords_and_defaults_are_the_tables(name):
    for fn in PYTHON_SURFACES[name]:
        params = inspect.signature(fn).parameters
        for row in table(name):
            keyword = row["python"]
            if keyword is None:
                continue
            if name == "plan" and keyword in ("seq_len", "batch_size") and fn is stoker.plan:
                assert params[keyword].default is inspect.Parameter.empty  # required there
                continue
            assert keyword in params, f"{fn.__qualname__} has no keyword {keyword!r} ({name})"
            default = params[keyword].default
            assert python_default_agrees(row, default), (
                f"{fn.__qualname__}({keyword}={default!r}) but the C++ default is "
                f"{row['default']!r}")
            if name != "plan" or fn is not stoker.plan:
                kind = params[keyword].kind
                if keyword in ("rank", "world_size"):
                    assert kind is inspect.Parameter.KEYWORD_ONLY


def test_tuple_keywords_are_declared_by_the_table():
    """A keyword that is a tuple of several rows (context_parallel=(cp_size, cp_rank)) is declared
    by the rows (python_part), is in the Loader's signature with default None (the rows' own
    defaults), and sets exactly those fields; a row with no Python keyword of its own is either
    such a part or bound by hand (listed here)."""
    from stoker._loader import option_tuples
    tuples = option_tuples("loader")
    assert tuples == {"context_parallel": (("cp_size", False), ("cp_rank", False)),
                      "flex_block_mask": (("flex_block_size", False), ("flex_mask_kind", False),
                                          ("flex_window", True))}
    params = inspect.signature(stoker.Loader.__init__).parameters
    for keyword in tuples:
        assert params[keyword].default is None and params[keyword].kind is params[
            keyword].KEYWORD_ONLY
    hand_bound = {"phases", "run_rows", "dataset_names", "monitor_sink",
                  "step_cost",  # step_cost: what model= resolves to
                  "tokens_per_step_schedule"}  # a stoker.Mixture's "tokens_per_step"
    for row in table("loader"):
        if row["python"] is None:
            assert row["python_part"] is not None or row["name"] in hand_bound, row["name"]


def test_a_tuple_keyword_sets_its_rows(tmp_path):
    out = tmp_path / "ds"
    stoker.pack("data/sample/corpus.jsonl", out, "bytes", num_workers=1)
    o = stoker.Loader(str(out), 64, 2, pack="bestfit", output="numpy",
                      flex_block_mask=(32, "sliding_window", 40))._options
    assert (o.flex_block_size, o.flex_mask_kind, o.flex_window) == (32, "sliding_window", 40)
    o = stoker.Loader(str(out), 64, 2, pack="bestfit", output="numpy",
                      context_parallel=(2, 1))._options
    assert (o.cp_size, o.cp_rank, o.pad_each_document_to) == (2, 1, 4)
    short = stoker.Loader(str(out), 64, 2, output="numpy", flex_block_mask=(16, "causal"))._options
    assert (short.flex_block_size, short.flex_mask_kind, short.flex_window) == (16, "causal", 0)
    with pytest.raises(ValueError, match=r"flex_block_mask must be \(flex_block_size, "
                                         r"flex_mask_kind\[, flex_window\]\), got \(16,\)"):
        stoker.Loader(str(out), 64, 2, flex_block_mask=(16,))
    with pytest.raises(ValueError, match="flex_mask_kind"):
        stoker.Loader(str(out), 64, 2, flex_block_mask=(16, "diagonal"))


def test_the_plan_defaults_are_the_loaders_but_batch_size():
    plan = {r["name"]: r["default"] for r in table("plan")}
    loader = {r["name"]: r["default"] for r in table("loader")}
    assert {k: v for k, v in loader.items() if k in plan} == dict(plan, batch_size=8)
    assert loader["seq_idx"] is False and plan["remainder"] == "drop_last"


# CLI11's help: "  --seq-len UINT:whole number ≥ 1=2048", "  --shuffle TEXT:{global,...}=global",
# "  --cache-dir TEXT=auto Excludes: ...", "  --seq-idx   Also build ...".
HELP_LINE = re.compile(r"^\s+(?:-\w,)?(--[\w-]+)(?: ([A-Z]+)(?::(?:\{[^}]*\}|(?:[^=\s]| (?! ))*))?"
                       r"(?:=(\S*))?)?")


def help_defaults(stoker_cli, *command):
    """{flag: the default its --help shows, or None} from `stoker COMMAND --help`."""
    out = subprocess.run([stoker_cli, *command, "--help"], capture_output=True, text=True,
                         check=True).stdout
    flags = {}
    for line in out.splitlines():
        m = HELP_LINE.match(line)
        if m:
            flags.setdefault(m.group(1), m.group(3))
    return flags


def help_text(stoker_cli, *command):
    """{flag: its help text} from `stoker COMMAND --help` (CLI11 puts the text on the flag's line
    or, indented to its column, on the next one)."""
    out = subprocess.run([stoker_cli, *command, "--help"], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    texts = {}
    for k, line in enumerate(out):
        m = HELP_LINE.match(line)
        if m:
            rest = line[m.end():].strip()
            rest = re.sub(r"^(Excludes|Needs): \S+( \S+)*?(?= {2,}|$)", "", rest).strip()
            if not rest and k + 1 < len(out) and out[k + 1].startswith(" " * 10):
                rest = out[k + 1].strip()
            texts.setdefault(m.group(1), rest)
    return texts


# The chat flags of streams share pack's longer help texts (tools/stoker/tokenizer_flags.h).
CHAT_ROWS = {"train_on", "chat_template", "chat_field"}

# The commands whose plan flags have the loader's defaults (batch_size 8).
LOADER_COMMANDS = {"bench", "doctor", "prefetch"}

# Each table's CLI surfaces: the commands whose flags are its rows.
CLI_SURFACES = {
    "plan": [("plan",), ("explain",), ("trace",), ("summary",), ("bench",), ("doctor",),
             ("prefetch",)],
    "loader": [("bench",), ("doctor",), ("prefetch",)],
    "stream": [("bench",), ("explain",), ("trace",), ("scan",)],
    "tokenizer": [("pack",), ("bench",)],
    "pack": [("pack",)],
}


@pytest.mark.parametrize("name", sorted(CLI_SURFACES))
def test_cli_flags_and_defaults_are_the_tables(name, stoker_cli):
    for command in CLI_SURFACES[name]:
        flags = help_defaults(stoker_cli, *command)
        texts = help_text(stoker_cli, *command)
        for row in table(name):
            flag = row["cli"]
            if flag is None:
                continue
            if name == "stream" and command == ("scan",) and flag in (
                    "--shuffle-buffer", "--steps-per-epoch", "--split-factor"):
                continue  # a scan reads whole files: no stream of batches
            assert flag in flags, f"stoker {' '.join(command)} has no {flag} ({name})"
            if name in ("plan", "stream") and row["name"] not in CHAT_ROWS:
                assert texts[flag] == row["doc"], f"stoker {' '.join(command)} {flag}"
            if row["kind"] == "bool":
                # A flag sets the value other than the default: --seq-idx, --no-position-ids.
                assert flag.startswith("--no-") == row["default"], flag
                continue
            shown = flags[flag]
            if shown is None or row["default"] is None:
                continue  # required, or a default that depends on the environment
            if name == "plan" and command[0] in LOADER_COMMANDS and row["name"] == "batch_size":
                assert shown == "8"  # the loader's
                continue
            assert shown == str(row["default"]), (
                f"stoker {' '.join(command)} {flag} [{shown}] but the C++ default is "
                f"{row['default']!r}")


def test_the_help_reader_sees_defaults(stoker_cli):
    flags = help_defaults(stoker_cli, "bench")
    assert flags["--seq-len"] == "2048" and flags["--prefetch-factor"] == "2"
    assert flags["--on-error"] == "fail" and "--seq-idx" in flags


def test_every_loader_option_is_in_the_docs():
    python = (ROOT / "docs" / "python.md").read_text()
    keywords = [r["python"] or (r["python_part"] or [None])[0] for r in table("loader")]
    missing = [k for k in keywords if k is not None and f"`{k}`" not in python]
    assert not missing, f"docs/python.md's option table lacks {missing}"
    loader = (ROOT / "docs" / "loader.md").read_text()
    missing = [r["name"] for r in table("loader") if f"`{r['name']}`" not in loader]
    missing += [r["cli"] for r in table("loader") if r["cli"] and f"`{r['cli']}`" not in loader]
    assert not missing, f"docs/loader.md's options lack {missing}"


def test_assignments_are_validated_by_the_row():
    o = _stoker.LoaderOptions()
    o.seq_idx = True
    assert o.seq_idx is True
    with pytest.raises(TypeError, match="seq_idx must be a bool"):
        o.seq_idx = 1
    with pytest.raises(ValueError, match="seq_len: must be a whole number >= 1"):
        o.seq_len = 0
    with pytest.raises(ValueError, match="on_error must be 'fail' or 'skip'"):
        o.on_error = "ignore"
    o.cache_size_bytes = "2GiB"  # sizes: the cache's own parser
    assert o.cache_size_bytes == 2 << 30
    with pytest.raises(ValueError, match="cache_size"):
        o.cache_size_bytes = "0"
    with pytest.raises(ValueError, match="option_table: no table 'nope'"):
        _stoker.option_table("nope")


def test_positional_rank_and_drop_last_still_work_with_a_warning(tmp_path):
    out = tmp_path / "ds"
    stoker.pack("data/sample/corpus.jsonl", out, "bytes", num_workers=1)
    new = stoker.Loader(str(out), 64, 2, seed=1, rank=1, world_size=2, output="numpy")
    with pytest.warns(DeprecationWarning, match=r"rank=, world_size= \(by keyword\)"):
        old = stoker.Loader(str(out), 64, 2, None, True, 2, True, True, "global", "concat", 1, 1,
                            2, output="numpy")
    assert old.state_dict() == new.state_dict()
    with pytest.warns(DeprecationWarning, match=r"drop_last=True is deprecated; use "
                                                r"remainder='drop_last'"):
        stoker.Loader(str(out), 64, 2, drop_last=True, output="numpy")
    with pytest.warns(DeprecationWarning, match="remainder='pad'"):
        padded = stoker.Loader(str(out), 64, 2, seed=1, rank=1, world_size=2, drop_last=False,
                               output="numpy")
    assert len(padded) >= len(new)
    with pytest.raises(ValueError, match="give remainder= only"):
        stoker.Loader(str(out), 64, 2, drop_last=True, remainder="pad")
    plan = stoker.plan(str(out), 64, 2, world_size=2)
    with pytest.warns(DeprecationWarning, match=r"rank=\)"):
        assert plan.batch(0, 0, 1) == plan.batch(0, 0, rank=1)


@pytest.mark.parametrize("name,cls", [("plan", "PlanOptions"), ("loader", "LoaderOptions"),
                                      ("stream", "StreamOptions"),
                                      ("tokenizer", "TokenizerOptions"), ("pack", "PackArgs")])
def test_every_row_is_an_attribute_that_reads_back(name, cls):
    o = getattr(_stoker, cls)()
    for row in table(name):
        if row["default"] is None:  # kOther: bound by hand (phases, inputs, ...) or C++ only
            continue
        assert getattr(o, row["name"]) == row["default"], row["name"]
        if row["name"] == "cache_size_bytes":  # 0 is "unset"; --cache-size 0 was always refused
            continue
        setattr(o, row["name"], row["default"])
        assert getattr(o, row["name"]) == row["default"], row["name"]
        if row["choices"]:
            setattr(o, row["name"], row["choices"][-1])
            assert getattr(o, row["name"]) == row["choices"][-1]


@pytest.mark.parametrize("name,cls", [("plan", "PlanOptions"), ("loader", "LoaderOptions"),
                                      ("stream", "StreamOptions"),
                                      ("tokenizer", "TokenizerOptions"), ("pack", "PackArgs")])
def test_the_stub_has_every_row(name, cls):
    """The installed _stoker.pyi (nanobind's stub of the bindings) types every row with a text
    form as a property of its class, with the row's type."""
    stub = (Path(_stoker.__file__).parent / "_stoker.pyi").read_text()
    body = re.search(rf"^class {cls}\b.*?(?=^class |\Z)", stub, re.M | re.S)
    assert body, f"_stoker.pyi has no class {cls}"
    types = {"bool": "bool", "int": "int", "unsigned": "int", "text": "str", "choice": "str",
             "size": "int", "count": "int"}
    for row in table(name):
        if row["default"] is None:
            continue
        if name == "loader" and any(r["name"] == row["name"] for r in table("plan")):
            continue  # typed in PlanOptions, its base
        typed = rf"def {row['name']}\(self, /\) -> {types[row['kind']]}:"
        assert re.search(typed, body.group(0)), (
            f"_stoker.pyi: {cls}.{row['name']} is not typed {types[row['kind']]}")
