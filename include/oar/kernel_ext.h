// A small C++ layer over the kernel part of the device plugin ABI
// (device_ext.h), for plugins written in C++. Header only; it needs the
// standard library (C++20) and device_ext.h, nothing of oar.
//
//   OAR_Status oar_plugin_init(OAR_PluginParams* params) {
//     if (OAR_Status s = oar::ext::init(params); s != OAR_SUCCESS) return s;
//     ... fill *params->device ...
//     oar::ext::register_kernel("relu", "npu", {oar::ext::kFloat32}, relu_kernel);
//     return OAR_SUCCESS;
//   }
//
//   void relu_kernel(oar::ext::KernelContext& ctx) {
//     oar::ext::TensorView x = ctx.input(0), y = ctx.output(0);
//     if (!x.is_contiguous()) throw oar::ext::Error(OAR_ERROR_UNSUPPORTED, "x must be contiguous");
//     const float* a = x.data<float>();
//     float* b = y.data<float>();
//     for (int64_t i = 0; i < y.numel(); ++i) b[i] = a[i] > 0 ? a[i] : 0;
//   }
//
// A kernel reports failure by throwing: oar::ext::Error carries a status,
// std::bad_alloc becomes OAR_ERROR_OUT_OF_MEMORY and any other exception
// OAR_ERROR; the message reaches the Python error.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "oar/device_ext.h"

namespace oar::ext {

enum DType : int {
  kBool = OAR_DTYPE_BOOL,
  kUInt8 = OAR_DTYPE_UINT8,
  kInt8 = OAR_DTYPE_INT8,
  kInt16 = OAR_DTYPE_INT16,
  kInt32 = OAR_DTYPE_INT32,
  kInt64 = OAR_DTYPE_INT64,
  kFloat16 = OAR_DTYPE_FLOAT16,
  kBFloat16 = OAR_DTYPE_BFLOAT16,
  kFloat32 = OAR_DTYPE_FLOAT32,
  kFloat64 = OAR_DTYPE_FLOAT64,
  kComplex64 = OAR_DTYPE_COMPLEX64,
  kComplex128 = OAR_DTYPE_COMPLEX128,
};

// Bytes per element.
inline size_t itemsize(DType t) {
  static constexpr unsigned char kSizes[OAR_NUM_DTYPES] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
  return unsigned(t) < OAR_NUM_DTYPES ? kSizes[t] : 0;
}

// What a kernel throws to fail with a status.
class Error : public std::runtime_error {
 public:
  Error(OAR_Status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  OAR_Status status() const { return status_; }

 private:
  OAR_Status status_;
};

// The host API oar passed to the plugin (set by init).
inline const OAR_HostAPI*& host_api() {
  static const OAR_HostAPI* api = nullptr;
  return api;
}

// Checks oar's ABI version against this header's and keeps the host API.
// Call it first in oar_plugin_init.
inline OAR_Status init(OAR_PluginParams* params) {
  if (!params || params->abi_major != OAR_DEVICE_ABI_MAJOR || !params->host) {
    if (params) params->error_message = "the plugin was built for another major version of the oar device ABI";
    return OAR_ERROR_INVALID_ARGUMENT;
  }
  host_api() = params->host;
  return OAR_SUCCESS;
}

class TensorView {
 public:
  TensorView() { v_.size = sizeof(v_); }
  explicit TensorView(const OAR_TensorView& v) : v_(v) {}

  bool defined() const { return v_.ndim >= 0; }  // false: an optional input left out
  DType dtype() const { return DType(v_.dtype); }
  int ndim() const { return v_.ndim; }
  std::span<const int64_t> shape() const { return {v_.shape, size_t(v_.ndim > 0 ? v_.ndim : 0)}; }
  std::span<const int64_t> strides() const { return {v_.strides, size_t(v_.ndim > 0 ? v_.ndim : 0)}; }
  int64_t shape(int d) const { return v_.shape[d]; }
  int64_t stride(int d) const { return v_.strides[d]; }
  int64_t numel() const { return v_.numel; }
  size_t nbytes() const { return size_t(v_.numel) * itemsize(dtype()); }
  // Row-major with no gaps (size-1 dims may have any stride).
  bool is_contiguous() const {
    int64_t expected = 1;
    for (int d = v_.ndim - 1; d >= 0; --d) {
      if (v_.shape[d] != 1 && v_.strides[d] != expected) return false;
      expected *= v_.shape[d];
    }
    return true;
  }
  void* raw_data() const { return v_.data; }
  template <typename T> T* data() const { return static_cast<T*>(v_.data); }
  const OAR_TensorView& raw() const { return v_; }

 private:
  OAR_TensorView v_{};
};

class KernelContext {
 public:
  explicit KernelContext(OAR_KernelContext* ctx) : ctx_(ctx), api_(host_api()) {}

  size_t num_inputs() const { return api_->num_inputs(ctx_); }
  size_t num_outputs() const { return api_->num_outputs(ctx_); }
  TensorView input(size_t i) const { return view(api_->input, i, "input"); }
  TensorView output(size_t i) const { return view(api_->output, i, "output"); }

  size_t num_attrs() const { return api_->num_attrs(ctx_); }
  std::string_view attr_name(size_t k) const {
    const char* n = api_->attr_name(ctx_, k);
    return n ? n : "";
  }
  OAR_AttrType attr_type(size_t k) const { return api_->attr_type(ctx_, k); }
  bool attr_bool(size_t k) const {
    int v = 0;
    check(api_->attr_bool(ctx_, k, &v), k, "a bool");
    return v != 0;
  }
  int64_t attr_int(size_t k) const {
    int64_t v = 0;
    check(api_->attr_int(ctx_, k, &v), k, "an int");
    return v;
  }
  double attr_float(size_t k) const {
    double v = 0;
    check(api_->attr_float(ctx_, k, &v), k, "a float");
    return v;
  }
  DType attr_dtype(size_t k) const {
    OAR_DataType v = OAR_DTYPE_FLOAT32;
    check(api_->attr_dtype(ctx_, k, &v), k, "a dtype");
    return DType(v);
  }
  std::string_view attr_string(size_t k) const {
    const char* p = nullptr;
    size_t n = 0;
    check(api_->attr_string(ctx_, k, &p, &n), k, "a string");
    return {p, n};
  }
  std::span<const int64_t> attr_ints(size_t k) const {
    const int64_t* p = nullptr;
    size_t n = 0;
    check(api_->attr_ints(ctx_, k, &p, &n), k, "an int list");
    return {p, n};
  }

  const char* op_name() const { return api_->op_name(ctx_); }
  int device_id() const { return api_->device_id(ctx_); }
  OAR_Stream stream() const { return api_->stream(ctx_); }
  OAR_KernelContext* raw() const { return ctx_; }

 private:
  using ViewFn = OAR_Status (*)(const OAR_KernelContext*, size_t, OAR_TensorView*);
  TensorView view(ViewFn fn, size_t i, const char* what) const {
    OAR_TensorView v{};
    v.size = sizeof(v);
    if (fn(ctx_, i, &v) != OAR_SUCCESS)
      throw Error(OAR_ERROR_INVALID_ARGUMENT, std::string(op_name()) + " has no " + what + " " + std::to_string(i));
    return TensorView(v);
  }
  void check(OAR_Status s, size_t k, const char* what) const {
    if (s != OAR_SUCCESS)
      throw Error(OAR_ERROR_INVALID_ARGUMENT, std::string(op_name()) + ": attribute " + std::to_string(k) + " (" +
                                                  std::string(attr_name(k)) + ") is not " + what);
  }

  OAR_KernelContext* ctx_;
  const OAR_HostAPI* api_;
};

using KernelFunction = void (*)(KernelContext&);

namespace detail {
inline OAR_Status call_kernel(OAR_KernelContext* ctx, void* user_data) {
  auto fn = reinterpret_cast<KernelFunction>(user_data);
  try {
    KernelContext k(ctx);
    fn(k);
    return OAR_SUCCESS;
  } catch (const Error& e) {
    host_api()->set_error(ctx, e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    host_api()->set_error(ctx, "out of host memory");
    return OAR_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    host_api()->set_error(ctx, e.what());
    return OAR_ERROR;
  } catch (...) {
    host_api()->set_error(ctx, "unknown exception");
    return OAR_ERROR;
  }
}
}  // namespace detail

// Registers `fn` for op `op` on `device_type` and each dtype (see
// OAR_HostAPI::register_kernel). Call after init().
inline OAR_Status register_kernel(const char* op, const char* device_type, std::initializer_list<DType> dtypes,
                                  KernelFunction fn) {
  if (!host_api()) return OAR_ERROR_INVALID_ARGUMENT;
  std::vector<OAR_DataType> dts;
  for (DType d : dtypes) dts.push_back(OAR_DataType(d));
  return host_api()->register_kernel(op, device_type, dts.data(), dts.size(), &detail::call_kernel,
                                     reinterpret_cast<void*>(fn));
}

}  // namespace oar::ext
