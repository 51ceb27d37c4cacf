// Clang thread-safety annotations (GUARDED_BY and friends). They document which mutex guards a
// member; with clang's -Wthread-safety they are checked, with other compilers they expand to
// nothing.
#pragma once

#if defined(__clang__)
#define STOKER_GUARDED_BY(x) __attribute__((guarded_by(x)))
#else
#define STOKER_GUARDED_BY(x)
#endif
