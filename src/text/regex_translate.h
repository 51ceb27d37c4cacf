// Translates a pre-tokenizer regex into PCRE2 syntax with the meaning the reference gives it.
//
// - `\s` / `\S` also cover U+0085 (NEL): Unicode White_Space, which Rust's regex (tiktoken) and
//   Oniguruma (tokenizers) use, while PCRE2's UCP `\s` is Z plus \t\n\v\f\r.
// - With `oniguruma`: Ruby syntax reads `X{n,m}+` as `(?:X{n,m})+` (an interval is never
//   possessive there), so cl100k's `\p{N}{1,3}+` matches any run of digits in tokenizers.
// Pure function; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace stoker {

std::string TranslateToPcre2(std::string_view pattern, bool oniguruma);

}  // namespace stoker
