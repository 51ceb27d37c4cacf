#include "chat/jinja_template.h"

#include <gtest/gtest.h>

namespace stoker::jinja {
namespace {

// Renders `source` with the JSON object `context`; an error's message in place of the text.
std::string R(std::string_view source, const char* context = "{}") {
  Result<Template> t = Template::Parse(source, "t.jinja");
  if (!t.ok()) return "ERROR " + t.status().message();
  Value ctx = Value::FromJson(nlohmann::ordered_json::parse(context));
  Result<RenderOutput> out = t->Render(ctx.dict());
  if (!out.ok()) return "ERROR " + out.status().message();
  return out->text;
}

TEST(JinjaTemplateTest, TrimBlocksAndLstripBlocksAsTransformersSetsThem) {
  EXPECT_EQ(R("{% if true %}\nA\n{% endif %}\nB"), "A\nB");
  EXPECT_EQ(R("  {% if true %}x{% endif %}"), "x");
  EXPECT_EQ(R("a  {%- if true -%}  b  {%- endif %}"), "ab");
  EXPECT_EQ(R("  {%+ if true %}x{% endif +%}\ny"), "  x\ny");
  EXPECT_EQ(R("{{ 'v' }}\nz\n"), "v\nz");  // one trailing newline of the template dropped
  EXPECT_EQ(R("a\r\nb"), "a\nb");
}

TEST(JinjaTemplateTest, ExpressionsFollowPython) {
  EXPECT_EQ(R("{{ [1, 2, 3][::-1] }} {{ 'héllo'[1:3] }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }}"),
            "[3, 2, 1] él -4 2 3.5");
  EXPECT_EQ(R("{{ 1e-5 }} {{ 1e16 }} {{ 0.1 + 0.2 }} {{ 2 ** 10 }} {{ none }} {{ true }}"),
            "1e-05 1e+16 0.30000000000000004 1024 None True");
  EXPECT_EQ(R("{{ {'a': [1, 'x'], 'b': none} }}"), "{'a': [1, 'x'], 'b': None}");
  EXPECT_EQ(R("{{ 'a' ~ 1 ~ undefined_name }}|{{ x or 'd' }}|{{ 'y' if false }}"), "a1|d|");
  EXPECT_EQ(R("{{ ' a b '.strip().split(' ') }} {{ 'x</t>y'.split('</t>')[-1] }}"), "['a', 'b'] y");
}

// {{ a + b + ... }} appends string terms as they come; anything else is Python's `+`, in order,
// with its errors, and nothing of a failed sum is written.
TEST(JinjaTemplateTest, OutputSumsAreStringConcatenationOrPythonsPlus) {
  EXPECT_EQ(R("{{ 'a' + b + 'c' + d }}", R"({"b": "B", "d": "数据"})"), "aBc数据");
  EXPECT_EQ(R("{{ 'x' }}{{ 'a' + 'b' }}{{ 'y' }}"), "xaby");
  EXPECT_EQ(R("{{ 1 + 2 + 3 }} {{ 1 + 2.5 }} {{ [1] + [2] }} {{ (1,) + (2,) }}"),
            "6 3.5 [1, 2] (1, 2)");
  EXPECT_EQ(R("{{ 'a' + ('b' + 'c') + 'd' }}"), "abcd");
  EXPECT_EQ(R("{{ ('a' ~ 1) + 'b' }}"), "a1b");
  EXPECT_EQ(R("{% set s %}{{ 'p' + q }}{% endset %}[{{ s }}]", R"({"q": "Q"})"), "[pQ]");
  EXPECT_EQ(R("{% macro m(x) %}{{ '<' + x + '>' }}{% endmacro %}{{ m('v') + '!' }}"), "<v>!");
  EXPECT_EQ(R("{{ 'a' + 1 }}"),
            "ERROR chat template t.jinja line 1: unsupported operand type(s) for +: 'str' and "
            "'int'");
  EXPECT_EQ(R("{{ 'a' + 'b' + 1 + 'c' }}"),
            "ERROR chat template t.jinja line 1: unsupported operand type(s) for +: 'str' and "
            "'int'");
  EXPECT_EQ(R("{{ 1 + 'a' }}"),
            "ERROR chat template t.jinja line 1: unsupported operand type(s) for +: 'int' and "
            "'str'");
  EXPECT_EQ(R("{{ 'a' + nope }}"),
            "ERROR chat template t.jinja line 1: an undefined value in an arithmetic expression "
            "(+)");
  EXPECT_EQ(R("{{ 'a' + raise_exception('no') + 'b' }}"),
            "ERROR chat template t.jinja line 1: the template raised an error: no");
}

TEST(JinjaTemplateTest, TojsonIsJsonDumpsWithoutHtmlEscaping) {
  EXPECT_EQ(R("{{ x | tojson }}", R"({"x": {"b": "<é>", "a": [1, 2.5, null, true]}})"),
            R"({"b": "<é>", "a": [1, 2.5, null, true]})");
  EXPECT_EQ(R("{{ x | tojson(indent=2) }}", R"({"x": {"k": [1]}})"),
            "{\n  \"k\": [\n    1\n  ]\n}");
}

TEST(JinjaTemplateTest, LoopsNamespacesAndMacros) {
  EXPECT_EQ(R("{% set ns = namespace(n=0) %}{% for x in xs if x > 1 %}{{ loop.index0 }}"
              "{{ '!' if loop.last }}{% set ns.n = ns.n + x %}{% endfor %}{{ ns.n }}",
              R"({"xs": [1, 2, 3]})"),
            "01!5");
  // A set inside a loop does not leak out of it.
  EXPECT_EQ(
      R("{% set c = 0 %}{% for i in range(3) %}{% set c = c + 1 %}{{ c }}{% endfor %}{{ c }}"),
      "1110");
  EXPECT_EQ(R("{% macro m(a, b='B') %}[{{ a }}{{ b }}]{% endmacro %}{{ m(1) }}{{ m(2, b=3) }}"),
            "[1B][23]");
  EXPECT_EQ(
      R("{% for k, v in d | items %}{{ k }}={{ v }};{% endfor %}", R"({"d": {"z": 1, "a": 2}})"),
      "z=1;a=2;");
  EXPECT_EQ(R("{% for x in [1, 2, 3] %}{% if x == 2 %}{% break %}{% endif %}{{ x }}{% endfor %}"),
            "1");
}

// A namespace that holds itself prints as Python prints it (jinja2's Namespace repr is
// "<Namespace " + repr of its dict + ">", and a dict met again is "{...}"); tojson refuses it.
TEST(JinjaTemplateTest, ANamespaceThatHoldsItselfPrintsAsPythonDoes) {
  EXPECT_EQ(R("{% set ns = namespace(a=1) %}{% set ns.a = ns %}{{ ns }}"),
            "<Namespace {'a': <Namespace {...}>}>");
  EXPECT_EQ(R("{% set ns = namespace(a=1) %}{% set ns.a = [ns, (ns,), {'k': ns}] %}{{ ns }}"),
            "<Namespace {'a': [<Namespace {...}>, (<Namespace {...}>,), {'k': <Namespace "
            "{...}>}]}>");
  EXPECT_EQ(R("{% set ns = namespace(a=1) %}{% set ns.a = ns %}{{ [ns, ns] | string }}"),
            "[<Namespace {'a': <Namespace {...}>}>, <Namespace {'a': <Namespace {...}>}>]");
  EXPECT_EQ(R("{% set ns = namespace(a=1) %}{% set ns.a = [ns] %}{{ {'x': [ns]} | tojson }}"),
            "ERROR chat template t.jinja line 1: Object of type Namespace is not JSON "
            "serializable");
}

TEST(JinjaTemplateTest, GenerationBlocksRecordTheirBytes) {
  Result<Template> t = Template::Parse("a{% generation %}bé{% endgeneration %}c", "g.jinja");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->has_generation());
  Result<RenderOutput> out = t->Render(Dict{});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->text, "abéc");
  ASSERT_EQ(out->generation_spans.size(), 1u);
  EXPECT_EQ(out->generation_spans[0], std::make_pair(size_t{1}, size_t{4}));
}

TEST(JinjaTemplateTest, ErrorsNameTheTemplateAndLine) {
  EXPECT_EQ(R("x\n{{ 1 | nosuchfilter }}"),
            "ERROR chat template t.jinja line 2: the filter 'nosuchfilter' is not supported by "
            "stoker's chat renderer");
  EXPECT_EQ(R("\n\n{% include 'x' %}"),
            "ERROR chat template t.jinja line 3: the statement 'include' is not supported by "
            "stoker's chat renderer");
  EXPECT_EQ(R("{% if true %}\n{{ raise_exception('no system role') }}{% endif %}"),
            "ERROR chat template t.jinja line 2: the template raised an error: no system role");
  EXPECT_EQ(R("{% if x %}"),
            "ERROR chat template t.jinja line 1: the template ended where "
            "elif or else or endif was expected");
  EXPECT_EQ(R("\n{{ m.content.x }}"), "ERROR chat template t.jinja line 2: 'm' is undefined");
  EXPECT_EQ(R("{{ [1].append(2) }}"),
            "ERROR chat template t.jinja line 1: list.append() is not supported (the sandbox "
            "keeps lists immutable)");
}

// Whether rendering `source` with x = "<U+E000>0<U+E001>ab" read x's characters (ReadWatch).
bool ReadsMarkedText(std::string_view source) {
  Result<Template> t = Template::Parse(source, "t.jinja");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  Dict ctx;
  ctx.Set("x", Value::String("\xee\x80\x80"
                             "0"
                             "\xee\x80\x81"
                             "ab"));
  ctx.Set("y", Value::String("plain"));
  ReadWatch watch;
  Result<RenderOutput> out = t->Render(ctx);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return watch.seen();
}

TEST(JinjaTemplateTest, ReadWatchSeesReadsOfMarkedStringsOnly) {
  // Passed on whole: written, concatenated, tested for emptiness, stored and passed around.
  for (const char* source :
       {"{{ x }}", "{{ '<' + x + '>' }}", "{{ 'a' ~ x }}", "{% set z = y + x %}{{ z }}",
        "{% if x %}1{% endif %}", "{{ x if x else 'e' }}", "{% set l = [x, y] %}{{ l[0] }}",
        "{% macro m(v) %}[{{ v }}]{% endmacro %}{{ m(x) }}", "{{ y | length }} {{ y == 'p' }}",
        "{% set c %}{{ x }}{% endset %}{{ c }}"}) {
    EXPECT_FALSE(ReadsMarkedText(source)) << source;
  }
  // Read: what the markers would change.
  for (const char* source :
       {"{{ x | length }}", "{{ x == 'ab' }}", "{{ 'a' in x }}", "{{ x.startswith('a') }}",
        "{{ x | trim }}", "{{ x.split('a') }}", "{{ x[1:] }}", "{{ x | tojson }}", "{{ [x] }}",
        "{{ x | upper }}", "{{ x | string }}", "{{ x < 'b' }}", "{% for c in x %}{% endfor %}",
        "{{ [x, y] | join(',') }}", "{{ x * 2 }}", "{{ {'k': x} }}"}) {
    EXPECT_TRUE(ReadsMarkedText(source)) << source;
  }
}

}  // namespace
}  // namespace stoker::jinja
