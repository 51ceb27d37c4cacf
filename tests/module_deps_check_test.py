"""scripts/check-module-deps on small trees written here: it passes a clean one and fails, naming
file, line and edge, on each kind of forbidden include. Run by ctest (ModuleDepsChecker):
python3 tests/module_deps_check_test.py."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

CHECKER = Path(__file__).resolve().parent.parent / "scripts" / "check-module-deps"

CMAKE = """
set(STOKER_MODULE_DEPS_common "")
set(STOKER_MODULE_DEPS_format common)  # a comment
set(STOKER_MODULE_DEPS_loader format common)
set(STOKER_MODULE_TEST_DEPS_format loader)
set(STOKER_MODULES common format loader)
set(STOKER_PUBLIC_HEADERS_common status.h)
set(STOKER_PUBLIC_HEADERS_loader loader.h)
"""

# A tree that follows every rule: each test below breaks one.
CLEAN = {
    "CMakeLists.txt": CMAKE,
    "include/stoker/status.h": "#include <string>\n",
    "include/stoker/loader.h": '#include "stoker/status.h"\n',
    "src/common/hash.h": '#include "stoker/status.h"\n',
    "src/format/reader.h": '#include "common/hash.h"\n#include "format/reader_impl.h"\n',
    "src/format/reader_impl.h": "",
    "src/format/reader.cc": '#include "format/reader.h"\n#include "reader_impl.h"\n',
    "src/format/test_util.h": '#include "common/hash.h"\n',
    "src/format/reader_test.cc": '#include "format/test_util.h"\n#include "stoker/loader.h"\n',
    "src/loader/engine.cc": '#include "format/reader.h"\n#include "stoker/loader.h"\n',
    "tools/stoker/flags.h": '#include "loader/engine.h"\n',
    "tools/stoker/main.cc": '#include "flags.h"\n#include "stoker/loader.h"\n',
    "python/bindings/register.h": '#include "stoker/loader.h"\n',
    "python/bindings/module.cc": '#include "register.h"\n#include "format/reader.h"\n',
    "examples/train.cc": '#include "stoker/loader.h"\n',
}


def run(changes):
    """Writes CLEAN with `changes` (path -> text, None deletes) and runs the checker on it."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for path, text in {**CLEAN, **changes}.items():
            if text is None:
                continue
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
        done = subprocess.run([sys.executable, str(CHECKER), str(root)], capture_output=True,
                              text=True)
        return done.returncode, done.stdout


class ModuleDepsCheckerTest(unittest.TestCase):
    def assertFails(self, changes, *expected):
        rc, out = run(changes)
        self.assertEqual(rc, 1, out)
        for text in expected:
            self.assertIn(text, out)

    def test_clean_tree_passes(self):
        rc, out = run({})
        self.assertEqual((rc, out), (0, ""))

    def test_upward_include_fails_naming_file_line_and_edge(self):
        self.assertFails({"src/format/reader.cc": '#include "format/reader.h"\n'
                                                  '#include "loader/engine.h"\n'},
                         'src/format/reader.cc:2: forbidden edge format -> loader '
                         '("loader/engine.h")')

    def test_a_public_header_counts_as_its_module(self):
        self.assertFails({"src/common/hash.h": '#include "stoker/loader.h"\n'},
                         "src/common/hash.h:1: forbidden edge common -> loader")

    def test_only_tests_get_the_test_allowance(self):
        self.assertFails({"src/format/reader.cc": '#include "stoker/loader.h"\n'},
                         "src/format/reader.cc:1: forbidden edge format -> loader")
        self.assertFails({"src/common/hash_test.cc": '#include "format/reader.h"\n'},
                         "src/common/hash_test.cc:1: forbidden edge common -> format")

    def test_production_code_never_includes_a_test_utility(self):
        self.assertFails({"src/format/reader.cc": '#include "format/test_util.h"\n'},
                         'src/format/reader.cc:1: production code includes the test utility')

    def test_public_header_includes_nothing_private(self):
        self.assertFails({"include/stoker/loader.h": '#include "format/reader.h"\n'},
                         'include/stoker/loader.h:1: public header includes "format/reader.h"')
        self.assertFails({"include/stoker/status.h": '#include "stoker/loader.h"\n'},
                         "include/stoker/status.h:1: forbidden edge common -> loader")

    def test_every_public_header_has_an_owner(self):
        self.assertFails({"include/stoker/extra.h": ""},
                         "include/stoker/extra.h: belongs to no module")

    def test_cli_headers_stay_out_of_the_public_prefix(self):
        self.assertFails({"tools/stoker/main.cc": '#include "stoker/flags.h"\n'},
                         'tools/stoker/main.cc:1: "stoker/flags.h" is a CLI-private header')

    def test_bindings_and_src_may_not_include_the_cli(self):
        self.assertFails({"python/bindings/module.cc": '#include "tools/stoker/flags.h"\n'},
                         "python/bindings/module.cc:1")
        self.assertFails({"src/loader/engine.cc": '#include "tools/stoker/flags.h"\n'},
                         "src/loader/engine.cc:1")

    def test_examples_use_public_headers_only(self):
        self.assertFails({"examples/train.cc": '#include "format/reader.h"\n'},
                         'examples/train.cc:1: "format/reader.h" is private')

    def test_table_and_folders_agree(self):
        self.assertFails({"src/stray/x.cc": ""}, "src/stray/: a folder of src/ that is not")
        self.assertFails({"CMakeLists.txt": CMAKE.replace(
            "set(STOKER_MODULE_DEPS_loader format common)",
            "set(STOKER_MODULE_DEPS_loader format nonesuch)")}, "names 'nonesuch'")


if __name__ == "__main__":
    unittest.main()
