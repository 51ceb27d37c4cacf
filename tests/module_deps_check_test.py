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
set(STOKER_MODULE_DEPS_loader format)
set(STOKER_MODULE_TEST_DEPS_loader common)
set(STOKER_MODULES common format loader)
set(STOKER_PUBLIC_HEADERS_common status.h)
set(STOKER_PUBLIC_HEADERS_loader loader.h)
"""

# A tree that follows every rule: each test below breaks one.
CLEAN = {
    "CMakeLists.txt": CMAKE,
    "include/stoker/status.h": "#include <string>\n",
    "include/stoker/loader.h": "class Loader {\n public:\n  int Size() const;\n};\n"
                               "int DefaultWorkers();\n",
    "docs/design.md": "# Design\n\n## The modules and their floors\n\n```\n"
                      "  common/        Status\n  format/        readers\n"
                      "  loader/        the engine\n```\n",
    "src/common/hash.h": '#include "stoker/status.h"\n',
    "src/format/reader.h": '#include "common/hash.h"\n#include "format/reader_impl.h"\n',
    "src/format/reader_impl.h": "",
    "src/format/reader.cc": '#include "format/reader.h"\n#include "reader_impl.h"\n',
    "src/format/test_util.h": '#include "common/hash.h"\n',
    "src/format/reader_test.cc": '#include "format/test_util.h"\n',
    "src/loader/engine.cc": '#include "format/reader.h"\n#include "stoker/loader.h"\n',
    "src/loader/engine_test.cc": '#include "common/hash.h"\n',
    "src/loader/loader.cc": '#include "stoker/loader.h"\n\nnamespace stoker {\n\n'
                            "int Loader::Size() const { return 0; }\n\n"
                            "int DefaultWorkers() { return 1; }\n\n}  // namespace stoker\n",
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
        self.assertFails({"src/loader/engine.cc": '#include "common/hash.h"\n'},
                         "src/loader/engine.cc:1: forbidden edge loader -> common")
        self.assertFails({"src/common/hash_test.cc": '#include "format/reader.h"\n'},
                         "src/common/hash_test.cc:1: forbidden edge common -> format")

    def test_no_arrow_runs_back_up_the_table(self):
        self.assertFails({"CMakeLists.txt": CMAKE + "set(STOKER_MODULE_TEST_DEPS_format loader)\n"},
                         "STOKER_MODULE_TEST_DEPS_format names loader, which STOKER_MODULES "
                         "lists at or above format: an arrow running back up")

    def test_the_drawing_shows_every_module_and_no_edge_up_or_sideways(self):
        drawing = CLEAN["docs/design.md"]
        self.assertFails({"docs/design.md": drawing.replace("  format/        readers\n", "")},
                         "docs/design.md: the drawing of the floors has no format/")
        self.assertFails({"docs/design.md": drawing.replace(
            "  format/        readers\n  loader/        the engine\n",
            "  format/  loader/   readers | the engine\n")},
            "docs/design.md: loader/ -> format/ (STOKER_MODULE_DEPS_loader) runs sideways")

    def test_a_public_header_is_implemented_by_its_module(self):
        self.assertFails({"src/format/reader.cc": '#include "stoker/loader.h"\n\n'
                                                  "int Loader::Size() const { return 1; }\n"},
                         "src/format/reader.cc:3: Loader::Size is declared in stoker/loader.h "
                         "(public, implemented by loader")
        self.assertFails({"src/format/reader.cc": "namespace stoker {\n"
                                                  "int DefaultWorkers() { return 2; }\n"
                                                  "}  // namespace stoker\n"},
                         "src/format/reader.cc:2: DefaultWorkers is declared in stoker/loader.h")
        rc, out = run({"src/format/reader.cc": "namespace stoker::format {\nnamespace {\n"
                                               "int DefaultWorkers() { return 2; }\n"
                                               "}  // namespace\n}  // namespace stoker::format\n"})
        self.assertEqual((rc, out), (0, ""), "a namesake in a module's own namespace is no break")

    def test_cli_and_bindings_use_the_public_header_where_there_is_one(self):
        self.assertFails({"src/common/status.h": "",
                          "python/bindings/module.cc": '#include "common/status.h"\n'},
                         'python/bindings/module.cc:1: "common/status.h" is internal where '
                         "stoker/status.h is public")
        # engine.cc now implements a function of stoker/loader.h: engine.h stands behind it.
        self.assertFails({"src/loader/engine.h": "",
                          "src/loader/engine.cc": '#include "stoker/loader.h"\n\n'
                                                  "namespace stoker {\n"
                                                  "int DefaultWorkers() { return 1; }\n"
                                                  "}  // namespace stoker\n",
                          "src/loader/loader.cc": '#include "stoker/loader.h"\n'},
                         'tools/stoker/flags.h:1: "loader/engine.h" is internal where '
                         "stoker/loader.h is public")

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
            "set(STOKER_MODULE_DEPS_loader format)",
            "set(STOKER_MODULE_DEPS_loader format nonesuch)")}, "names 'nonesuch'")


if __name__ == "__main__":
    unittest.main()
