// Templates and values that are broken or hostile (issue 44): each is a clean error, or Python's
// answer, never a signal. Every probe runs in a child process, so that a crash fails the test
// instead of killing the test binary.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "chat/jinja_template.h"

namespace stoker::jinja {
namespace {

// Renders `source` with the JSON object `context` in a child process (its address space limited
// to `memory_mib` when not 0, outside sanitizer builds); what the child wrote: the text, or
// "ERROR " and the message, or "SIGNAL n" when the child died.
std::string RenderInChild(const std::string& source, const std::string& context = "{}",
                          const RenderLimits& limits = {}, int memory_mib = 0) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    if (memory_mib > 0) {
      rlimit lim{rlim_t(memory_mib) << 20, rlim_t(memory_mib) << 20};
      setrlimit(RLIMIT_AS, &lim);
    }
#endif
    std::string out;
    Result<Template> t = Template::Parse(source, "t.jinja");
    if (!t.ok()) {
      out = "ERROR " + t.status().message();
    } else {
      Value ctx = Value::FromJson(nlohmann::ordered_json::parse(context));
      Result<RenderOutput> r = t->Render(ctx.dict(), limits);
      out = r.ok() ? r->text : "ERROR " + r.status().message();
    }
    if (out.size() > 4096) out = out.substr(0, 4096);
    ssize_t n = write(fds[1], out.data(), out.size());
    _exit(n == ssize_t(out.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return "SIGNAL " + std::to_string(WTERMSIG(status));
  return got;
}

std::string Repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(JinjaLimitsTest, IntegersNeverWrapNorTrap) {
  // jinja2: (-2**63) // -1 is 2**63, past 64 bits: an error here, not SIGFPE.
  EXPECT_EQ(RenderInChild("{{ (-9223372036854775807 - 1) // -1 }}"),
            "ERROR chat template t.jinja line 1: integer overflow in //: the result does not fit "
            "in 64 bits (stoker's chat renderer computes with 64-bit integers)");
  EXPECT_EQ(RenderInChild("{{ (-9223372036854775807 - 1) % -1 }}"), "0");
  EXPECT_EQ(RenderInChild("{{ -(-9223372036854775807 - 1) }}").substr(0, 52),
            "ERROR chat template t.jinja line 1: integer overflow");
  EXPECT_EQ(RenderInChild("{{ 9223372036854775807 + 1 }}").substr(0, 52),
            "ERROR chat template t.jinja line 1: integer overflow");
  EXPECT_EQ(RenderInChild("{{ 3037000500 * 3037000500 }}").substr(0, 52),
            "ERROR chat template t.jinja line 1: integer overflow");
  EXPECT_EQ(RenderInChild("{{ 2 ** 62 }} {{ (-2) ** 63 }} {{ 1 ** 10**18 }} {{ (-1) ** 10**18 }}"),
            "4611686018427387904 -9223372036854775808 1 1");
  EXPECT_EQ(RenderInChild("{{ 2 ** 10**18 }}").substr(0, 52),
            "ERROR chat template t.jinja line 1: integer overflow");
  EXPECT_EQ(RenderInChild("{{ 12345678901234567890 }}"),
            "ERROR chat template t.jinja line 1: the integer 12345678901234567890 does not fit in "
            "64 bits");
}

// Integers of the data past int64 (tool arguments) print as Python prints them.
TEST(JinjaLimitsTest, BigIntegersFromJsonPrintExactly) {
  const std::string ctx = R"({"a": {"id": 12345678901234567890}, "n": 18446744073709551615})";
  EXPECT_EQ(RenderInChild("{{ a.id }} {{ a|tojson }} {{ n is integer }} {{ a.id == a.id }}", ctx),
            "12345678901234567890 {\"id\": 12345678901234567890} True True");
  EXPECT_EQ(RenderInChild("{{ a }} {{ n > 5 }}", ctx), "{'id': 12345678901234567890} True");
  EXPECT_EQ(RenderInChild("{{ n + 1 }}", ctx).substr(0, 52),
            "ERROR chat template t.jinja line 1: integer overflow");
}

// Chains that the parser builds without recursion but the renderer walks with it: each deep
// chain is refused at parse time (jinja2 fails on them too, with a RecursionError).
TEST(JinjaLimitsTest, DeepExpressionsAreRefusedNotAStackOverflow) {
  const int n = 7200;
  const std::string probes[] = {
      "{{ " + Repeat("not ", n) + "x }}",
      "{{ " + Repeat("-", n) + "1 }}",
      "{{ x" + Repeat(".x", n) + " }}",
      "{{ 'a'" + Repeat("|trim", n) + " }}",
      "{{ x" + Repeat("[0]", n) + " }}",
      "{{ 'a'" + Repeat(" ~ 'a'", n) + " }}",
      "{{ 2" + Repeat(" ** 2", n) + " }}",
      "{{ x" + Repeat(" and x", n) + " }}",
      "{{ " + Repeat("(", n) + "1" + Repeat(")", n) + " }}",
      "{{ x" + Repeat("(", n) + Repeat(")", n) + " }}",
      "{% if x %}" + Repeat("{% if x %}", n) + Repeat("{% endif %}", n + 1),
  };
  for (const std::string& p : probes) {
    std::string got = RenderInChild(p);
    EXPECT_NE(got.find("nested too deeply"), std::string::npos) << p.substr(0, 30) << ": " << got;
  }
  // Real templates stay far inside the bound.
  EXPECT_EQ(RenderInChild("{{ 'a'" + Repeat(" ~ 'a'", 150) + " }}"), Repeat("a", 151));
  EXPECT_EQ(RenderInChild("{{ 'ab'" + Repeat("|trim", 150) + " }}"), "ab");
}

// Nesting that only shows while rendering: a macro that recurses through deep blocks.
TEST(JinjaLimitsTest, DeepRenderingIsAnError) {
  std::string body =
      Repeat("{% if true %}", 150) + "{{ m(n - 1) if n > 0 }}" + Repeat("{% endif %}", 150);
  std::string got = RenderInChild("{% macro m(n) %}" + body + "{% endmacro %}{{ m(90) }}");
  EXPECT_NE(got.find("nested too deeply"), std::string::npos) << got;
}

TEST(JinjaLimitsTest, LengthsAndAllocationsAreErrors) {
  EXPECT_EQ(RenderInChild("{{ 'x' * 10**10 }}"),
            "ERROR chat template t.jinja line 1: the template builds a value of more than "
            "268435456 bytes or items (stoker's bound on one rendering)");
  EXPECT_EQ(RenderInChild("{{ [1, 2] * 10**10 }}").substr(0, 76),
            "ERROR chat template t.jinja line 1: the template builds a value of more than");
  EXPECT_EQ(RenderInChild("{{ 'x' * -3 }}|{{ [1] * -1 }}"), "|[]");
  // jinja2's indent: " " * width, so a negative width indents by nothing.
  EXPECT_EQ(RenderInChild("{{ 'a\\nb'|indent(-5) }}|{{ 'a\\nb'|indent(2) }}"), "a\nb|a\n  b");
  EXPECT_EQ(RenderInChild("{{ 'a\\nb'|indent(10**12) }}").substr(0, 76),
            "ERROR chat template t.jinja line 1: the template builds a value of more than");
  EXPECT_EQ(RenderInChild("{{ {'a': 1}|tojson(indent=10**12) }}").substr(0, 76),
            "ERROR chat template t.jinja line 1: the template builds a value of more than");
  // A string doubled in a namespace, in a process of 1 GiB.
  std::string got = RenderInChild(
      "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
      "{% endfor %}{{ ns.s|length }}",
      "{}", {}, 1024);
  EXPECT_EQ(got.substr(0, 76),
            "ERROR chat template t.jinja line 1: the template builds a value of more than");
  // The output itself.
  RenderLimits small;
  small.max_output_bytes = 1000;
  EXPECT_EQ(RenderInChild("{% for i in range(2000) %}x{% endfor %}", "{}", small),
            "ERROR chat template t.jinja line 1: the template writes more than 1000 bytes "
            "(stoker's bound on one rendering)");
}

// transformers' sandbox refuses ranges over 100,000 items (jinja2's MAX_RANGE) before building
// them, with or without a `break` after a few.
TEST(JinjaLimitsTest, RangeFollowsTheSandbox) {
  const std::string refused =
      "ERROR chat template t.jinja line 1: Range too big. The sandbox blocks ranges larger than "
      "MAX_RANGE (100000).";
  EXPECT_EQ(RenderInChild("{{ range(10**9)|length }}", "{}", {}, 1024), refused);
  EXPECT_EQ(RenderInChild("{% for i in range(10**7) %}{{ i }}{% if i == 2 %}{% break %}{% endif %}"
                          "{% endfor %}"),
            refused);
  EXPECT_EQ(RenderInChild("{{ range(100000)|length }} {{ range(0, 10**9, 10**4)|length }} "
                          "{{ range(5, -5, -3)|list }}"),
            "100000 100000 [5, 2, -1, -4]");
}

TEST(JinjaLimitsTest, StepsAreBounded) {
  RenderLimits small;
  small.max_steps = 100000;
  EXPECT_EQ(RenderInChild("{% for a in range(1000) %}{% for b in range(1000) %}{% endfor %}"
                          "{% endfor %}",
                          "{}", small),
            "ERROR chat template t.jinja line 1: the template ran for more than 100000 steps "
            "(stoker's bound on one rendering)");
}

TEST(JinjaLimitsTest, PythonErrorsWherePythonRaises) {
  EXPECT_EQ(RenderInChild("{{ 'abc'.split('') }}"),
            "ERROR chat template t.jinja line 1: empty separator");
  EXPECT_EQ(RenderInChild("{{ 'abc'.rsplit('', 1) }}"),
            "ERROR chat template t.jinja line 1: empty separator");
  EXPECT_EQ(RenderInChild("{{ [1, 2][::0] }}"),
            "ERROR chat template t.jinja line 1: slice step cannot be zero");
  EXPECT_EQ(RenderInChild("{{ 'ab'[::0] }}"),
            "ERROR chat template t.jinja line 1: slice step cannot be zero");
}

// Python's full case mappings and character classes (str.upper, lower, title, capitalize,
// isalpha, isdigit, isalnum), the filters included.
TEST(JinjaLimitsTest, UnicodeCaseAndClassesFollowPython) {
  EXPECT_EQ(
      RenderInChild("{{ 'straße'.upper() }} {{ 'ﬁx'|upper }} {{ 'İ'.lower()|length }} "
                    "{{ 'ΣΑΣ ΟΔΟΣ.'.lower() }} {{ 'ßa'.capitalize() }} {{ 'ǆa ßb'.title() }}"),
      "STRASSE FIX 2 σας οδος. Ssa ǅa Ssb");
  EXPECT_EQ(RenderInChild("{{ 'é中ñ'.isalpha() }} {{ '²٣'.isdigit() }} {{ 'x²'.isalnum() }} "
                          "{{ '½'.isdigit() }} {{ 'a1'.isalpha() }}"),
            "True True True False False");
}

}  // namespace
}  // namespace stoker::jinja
