// FunctionRef: a non-owning reference to a callable, for callbacks that run within the call they
// are passed to (no allocation, unlike std::function, whose small buffer a lambda capturing a few
// references may outgrow: this is on the path of every document read).
// Thread contract: as the referenced callable's; the callable must outlive the FunctionRef.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace stoker {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef> &&
                                                    std::is_invocable_r_v<R, F&, Args...>>>
  FunctionRef(F&& f)  // NOLINT(google-explicit-constructor): passed as a lambda
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace stoker
