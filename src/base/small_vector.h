// A vector with inline storage for the first N elements: shapes and strides
// of small rank, op inputs and outputs, live on the stack or inside the tensor.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <initializer_list>
#include <new>
#include <type_traits>
#include <utility>

namespace oar {

template <typename T, int N> class SmallVector {
 public:
  SmallVector() = default;
  explicit SmallVector(size_t n, const T& v = T()) { assign(n, v); }
  SmallVector(std::initializer_list<T> il) { append(il.begin(), il.end()); }
  template <typename It, typename = decltype(*std::declval<It>())>
  SmallVector(It b, It e) { append(b, e); }
  SmallVector(const SmallVector& o) { append(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { take(std::move(o)); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) { clear(); append(o.begin(), o.end()); }
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) { release(); take(std::move(o)); }
    return *this;
  }
  ~SmallVector() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  T* begin() { return ptr_; }
  T* end() { return ptr_ + size_; }
  const T* begin() const { return ptr_; }
  const T* end() const { return ptr_ + size_; }
  T& operator[](size_t i) { return ptr_[i]; }
  const T& operator[](size_t i) const { return ptr_[i]; }
  T& back() { return ptr_[size_ - 1]; }
  const T& back() const { return ptr_[size_ - 1]; }

  void push_back(const T& v) { T c(v); emplace_back(std::move(c)); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  template <typename... A> T& emplace_back(A&&... a) {
    if (size_ == cap_) grow(cap_ * 2);
    new (ptr_ + size_) T(std::forward<A>(a)...);
    return ptr_[size_++];
  }
  void pop_back() { ptr_[--size_].~T(); }
  void clear() { for (size_t i = 0; i < size_; ++i) ptr_[i].~T(); size_ = 0; }
  void resize(size_t n, const T& v = T()) {
    if (n < size_) { for (size_t i = n; i < size_; ++i) ptr_[i].~T(); size_ = n; return; }
    reserve(n);
    while (size_ < n) new (ptr_ + size_++) T(v);
  }
  void assign(size_t n, const T& v) { clear(); resize(n, v); }
  void reserve(size_t n) { if (n > cap_) grow(n); }
  template <typename It> void append(It b, It e) {
    reserve(size_ + size_t(std::distance(b, e)));
    for (; b != e; ++b) new (ptr_ + size_++) T(*b);
  }
  void insert(size_t pos, const T& v) {
    emplace_back(v);
    std::rotate(ptr_ + pos, ptr_ + size_ - 1, ptr_ + size_);
  }
  void erase(size_t pos) {
    std::rotate(ptr_ + pos, ptr_ + pos + 1, ptr_ + size_);
    pop_back();
  }
  bool operator==(const SmallVector& o) const {
    return size_ == o.size_ && std::equal(begin(), end(), o.begin());
  }
  bool operator!=(const SmallVector& o) const { return !(*this == o); }

 private:
  T* inline_ptr() { return reinterpret_cast<T*>(buf_); }
  void grow(size_t n) {
    n = std::max<size_t>(n, 1);
    T* p = static_cast<T*>(std::malloc(n * sizeof(T)));
    if (!p) throw std::bad_alloc();
    for (size_t i = 0; i < size_; ++i) { new (p + i) T(std::move(ptr_[i])); ptr_[i].~T(); }
    if (ptr_ != inline_ptr()) std::free(ptr_);
    ptr_ = p;
    cap_ = n;
  }
  void release() {
    clear();
    if (ptr_ != inline_ptr()) std::free(ptr_);
    ptr_ = inline_ptr();
    cap_ = N;
  }
  void take(SmallVector&& o) {
    if (o.ptr_ != o.inline_ptr()) {
      ptr_ = o.ptr_; size_ = o.size_; cap_ = o.cap_;
      o.ptr_ = o.inline_ptr(); o.size_ = 0; o.cap_ = N;
    } else {
      ptr_ = inline_ptr(); cap_ = N; size_ = 0;
      for (size_t i = 0; i < o.size_; ++i) new (ptr_ + size_++) T(std::move(o.ptr_[i]));
      o.clear();
    }
  }

  alignas(T) unsigned char buf_[N * sizeof(T)];
  T* ptr_ = inline_ptr();
  size_t size_ = 0, cap_ = N;
};

// Shapes and strides (in elements).
using Dims = SmallVector<int64_t, 6>;

}  // namespace oar
