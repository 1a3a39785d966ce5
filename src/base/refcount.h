// Intrusive reference counting whose count can be handed to a Python object.
// Before a Python wrapper exists, the count lives here (odd values: count*2+1).
// Once the bindings attach a wrapper, the word holds the PyObject* and every
// inc/dec goes to the Python reference count, so one C++ object has exactly
// one Python object for its whole life (identity, attributes, hooks).
// Callers hold the GIL whenever a Python-owned object's count changes.
#pragma once
#include <atomic>
#include <cstdint>
#include <utility>

namespace oar {

struct PyRefHooks {
  void (*inc)(void*) = nullptr;
  void (*dec)(void*) = nullptr;
};
PyRefHooks& py_ref_hooks();

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;

  void inc_ref() const noexcept {
    uintptr_t v = state_.load(std::memory_order_relaxed);
    if (v & 1) state_.fetch_add(2, std::memory_order_relaxed);
    else py_ref_hooks().inc(reinterpret_cast<void*>(v));
  }
  // True when the caller must delete the object.
  bool dec_ref() const noexcept {
    uintptr_t v = state_.load(std::memory_order_relaxed);
    if (v & 1) return state_.fetch_sub(2, std::memory_order_acq_rel) == 3;
    py_ref_hooks().dec(reinterpret_cast<void*>(v));
    return false;
  }
  void* self_py() const noexcept {
    uintptr_t v = state_.load(std::memory_order_relaxed);
    return (v & 1) ? nullptr : reinterpret_cast<void*>(v);
  }
  // Transfers the C++ count to the new Python wrapper `o`.
  void set_self_py(void* o) noexcept {
    uintptr_t v = state_.load(std::memory_order_relaxed);
    for (uintptr_t n = v >> 1; n > 0; --n) py_ref_hooks().inc(o);
    state_.store(reinterpret_cast<uintptr_t>(o), std::memory_order_relaxed);
  }
  uintptr_t use_count() const noexcept {
    uintptr_t v = state_.load(std::memory_order_relaxed);
    return (v & 1) ? (v >> 1) : 0;
  }

 private:
  mutable std::atomic<uintptr_t> state_{1};
};

template <typename T> class Ref {
 public:
  Ref() = default;
  Ref(T* p) : p_(p) { if (p_) p_->inc_ref(); }
  Ref(const Ref& o) : p_(o.p_) { if (p_) p_->inc_ref(); }
  Ref(Ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  template <typename U> Ref(const Ref<U>& o) : Ref(static_cast<T*>(o.get())) {}
  ~Ref() { reset(); }
  Ref& operator=(const Ref& o) { Ref(o).swap(*this); return *this; }
  Ref& operator=(Ref&& o) noexcept { Ref(std::move(o)).swap(*this); return *this; }
  void swap(Ref& o) noexcept { std::swap(p_, o.p_); }
  void reset() { if (p_ && p_->dec_ref()) delete p_; p_ = nullptr; }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const Ref& o) const { return p_ == o.p_; }

 private:
  T* p_ = nullptr;
};

template <typename T, typename... A> Ref<T> make_ref(A&&... a) { return Ref<T>(new T(std::forward<A>(a)...)); }

}  // namespace oar
