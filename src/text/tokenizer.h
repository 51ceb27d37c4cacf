// Tokenizer, TokenizerOptions and OpenTokenizer are public: include/stoker/tokenizer.h.
#pragma once

#include "stoker/tokenizer.h"
