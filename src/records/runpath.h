// The RUNPATH (or, without one, the RPATH) of the loaded binary or shared object that holds an
// address: where the Arrow module is looked for when stoker's static code is linked into a
// trainer built against an installed stoker (its stoker::stoker target adds lib/ there, and the
// installed CLI has $ORIGIN/../lib). Read from the object's dynamic section as the dynamic loader
// mapped it; glibc only, as RTLD_DEEPBIND is.
// Thread-safe: a pure function of the process's loaded objects.
#pragma once

#include <string>
#include <vector>

namespace stoker {

// The directories, in order, with $ORIGIN and ${ORIGIN} replaced by the object's directory;
// empty when the object has neither entry or `address` is in no loaded object.
std::vector<std::string> RunpathDirs(const void* address);

}  // namespace stoker
