#include <algorithm>
#include <sstream>

#include "ops/ops.h"

namespace oar::ops {

std::string shape_str(const Dims& s) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << ']';
  return os.str();
}

int64_t normalize_axis(int64_t axis, int64_t ndim, const char* api) {
  int64_t n = std::max<int64_t>(ndim, 1);  // a 0-D tensor accepts axis 0 and -1
  OAR_CHECK(axis >= -n && axis < n, Index, "[", api, "] axis ", axis, " is out of range for a ", ndim,
            "-D tensor; expected -", n, " <= axis < ", n);
  return axis < 0 ? axis + n : axis;
}

Dims normalize_axes(const Dims& axes, int64_t ndim, const char* api, bool all_if_empty) {
  Dims out;
  if (axes.empty() && all_if_empty) {
    for (int64_t i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  for (int64_t a : axes) out.push_back(ndim == 0 ? (normalize_axis(a, ndim, api), 0) : normalize_axis(a, ndim, api));
  std::sort(out.begin(), out.end());
  for (size_t i = 1; i < out.size(); ++i)
    OAR_CHECK(out[i] != out[i - 1] || ndim == 0, Value, "[", api, "] axis ", out[i], " appears more than once");
  if (ndim == 0) out.clear();
  return out;
}

Dims broadcast_shapes(const Dims& a, const Dims& b, const char* api) {
  size_t n = std::max(a.size(), b.size());
  Dims out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    OAR_CHECK(da == db || da == 1 || db == 1, Value, "[", api, "] shapes ", shape_str(a), " and ",
              shape_str(b), " cannot be broadcast together (dim ", i, ": ", da, " vs ", db, ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Dims reduced_shape(const Dims& in, const Dims& axes, bool keepdim) {
  Dims out;
  size_t k = 0;
  for (int64_t d = 0; d < int64_t(in.size()); ++d) {
    if (k < axes.size() && axes[k] == d) {
      ++k;
      if (keepdim) out.push_back(1);
    } else {
      out.push_back(in[d]);
    }
  }
  return out;
}

DType result_type(const Tensor& a, const Scalar& s) {
  DType t = a.dtype();
  if (s.is_complex()) return is_complex(t) ? t : (t == DType::Float64 ? DType::Complex128 : to_complex(default_float_dtype()));
  if (s.is_floating()) return is_inexact(t) ? t : default_float_dtype();
  if (s.kind == Scalar::Kind::Int) return t == DType::Bool ? DType::Int64 : t;
  return t;
}

AttrValue scalar_attr(const Scalar& s) {
  switch (s.kind) {
    case Scalar::Kind::Bool: return bool(s.i);
    case Scalar::Kind::Int: return s.i;
    case Scalar::Kind::Float: return s.d;
    default: return s.c;
  }
}

Scalar attr_scalar(const AttrValue& a) {
  if (auto* b = std::get_if<bool>(&a)) return Scalar(*b);
  if (auto* i = std::get_if<int64_t>(&a)) return Scalar(*i);
  if (auto* d = std::get_if<double>(&a)) return Scalar(*d);
  return Scalar(std::get<std::complex<double>>(a));
}

Tensor scalar_tensor(const Scalar& s, DType dt) { return full(Dims{}, s, dt); }

}  // namespace oar::ops
