// ByteStream now lives in records/ (sequential, decompressing reads over a ByteSource); this
// header keeps the ingest include path working.
#pragma once

#include "records/byte_stream.h"
