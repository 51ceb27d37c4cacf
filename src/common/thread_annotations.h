// Clang thread-safety annotations (GUARDED_BY and friends). They document which mutex guards a
// member. They are not checked: clang's -Wthread-safety needs a mutex type annotated as a
// capability, and libstdc++'s std::mutex is not; TSan checks the locking instead. With compilers
// other than clang they expand to nothing.
#pragma once

#if defined(__clang__)
#define STOKER_GUARDED_BY(x) __attribute__((guarded_by(x)))
#else
#define STOKER_GUARDED_BY(x)
#endif
