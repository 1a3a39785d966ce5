// Op functions of the oar module and the Tensor operators and methods that
// map straight onto them. No logic beyond argument conversion.
#include <omp.h>

#include "autograd/autograd.h"
#include "common.h"
#include "dtype_arg.h"
#include "ops_docs.h"
#include "kernels/cpu/vmath.h"

namespace oar::bind {
namespace {

using nb::arg;
const auto kNone = nb::none();

// The declared elementwise ops (src/ops/elementwise.toml): names and docstrings.
// name: the op's or an alias; doc_inplace: of its in-place form, name + "_"
struct DeclaredOp { const char* name; const char* op; const char* doc; const char* doc_inplace; };
#include "gen/bind/elementwise.inc"

// Python operators: (dunder, op, reflected).
struct OpName { const char* py; const char* op; bool reflected; };
const OpName kOperators[] = {
    {"__add__", "add", false}, {"__radd__", "add", true}, {"__sub__", "subtract", false},
    {"__rsub__", "subtract", true}, {"__mul__", "multiply", false}, {"__rmul__", "multiply", true},
    {"__truediv__", "divide", false}, {"__rtruediv__", "divide", true}, {"__floordiv__", "floor_divide", false},
    {"__rfloordiv__", "floor_divide", true}, {"__mod__", "remainder", false}, {"__rmod__", "remainder", true},
    {"__pow__", "pow", false}, {"__rpow__", "pow", true}, {"__eq__", "equal", false},
    {"__ne__", "not_equal", false}, {"__lt__", "less_than", false}, {"__le__", "less_equal", false},
    {"__gt__", "greater_than", false}, {"__ge__", "greater_equal", false}, {"__and__", "bitwise_and", false},
    {"__rand__", "bitwise_and", true}, {"__or__", "bitwise_or", false}, {"__ror__", "bitwise_or", true},
    {"__xor__", "bitwise_xor", false}, {"__rxor__", "bitwise_xor", true}};
const OpName kInplace[] = {{"__iadd__", "add", false}, {"__isub__", "subtract", false},
                           {"__imul__", "multiply", false}, {"__itruediv__", "divide", false}};

// Logical ops on bool tensors for &, |, ^.
std::string bool_aware(const std::string& op) {
  if (op == "bitwise_and") return "logical_and";
  if (op == "bitwise_or") return "logical_or";
  if (op == "bitwise_xor") return "logical_xor";
  return op;
}
// An operator's op, resolved once at import, and its variant for bool tensors.
struct Resolved {
  const ops::BinaryOp* op;
  const ops::BinaryOp* on_bool;
  explicit Resolved(const std::string& name)
      : op(&ops::binary_op(name)), on_bool(&ops::binary_op(bool_aware(name))) {}
  const ops::BinaryOp& operator()(const Tensor& x) const { return x.dtype() == DType::Bool ? *on_bool : *op; }
};

void bind_ops(nb::module_& m) {
  auto cls = nb::borrow<nb::class_<TensorImpl>>(m.attr("Tensor"));

  for (const auto& [name, op_name, doc, doc_inplace] : kDeclaredBinary) {
    const ops::BinaryOp* op = &ops::binary_op(op_name);
    m.def(name, [op](const Tensor& x, const Tensor& y, nb::handle) { return ops::binary(*op, x, y); },
          arg("x"), arg("y"), arg("name") = kNone, doc);
    m.def(name, [op](const Tensor& x, const Scalar& y, nb::handle) { return ops::binary_scalar(*op, x, y, false); },
          arg("x"), arg("y"), arg("name") = kNone);
    m.def(name, [op](const Scalar& x, const Tensor& y, nb::handle) { return ops::binary_scalar(*op, y, x, true); },
          arg("x"), arg("y"), arg("name") = kNone);
    cls.def(name, [op](TensorImpl* x, const Tensor& y, nb::handle) { return ops::binary(*op, Tensor(x), y); },
            arg("y"), arg("name") = kNone, doc);
    cls.def(name, [op](TensorImpl* x, const Scalar& y, nb::handle) {
      return ops::binary_scalar(*op, Tensor(x), y, false);
    }, arg("y"), arg("name") = kNone);
    // The in-place form, as a Tensor method and as a function (paddle.add_).
    std::string ip = std::string(name) + "_";
    auto inplace = [op](TensorImpl* x, const Tensor& y, nb::handle) -> Tensor {
      Tensor t(x);
      return ops::binary_(*op, t, y);
    };
    auto inplace_scalar = [op](TensorImpl* x, const Scalar& y, nb::handle) -> Tensor {
      Tensor t(x);
      return ops::binary_(*op, t, ops::scalar_tensor(y, ops::result_type(t, y)));
    };
    cls.def(ip.c_str(), inplace, arg("y"), arg("name") = kNone, doc_inplace);
    cls.def(ip.c_str(), inplace_scalar, arg("y"), arg("name") = kNone);
    m.def(ip.c_str(), inplace, arg("x"), arg("y"), arg("name") = kNone, doc_inplace);
    m.def(ip.c_str(), inplace_scalar, arg("x"), arg("y"), arg("name") = kNone);
  }
  for (const OpName& o : kOperators) {
    Resolved op(o.op);
    if (o.reflected) {
      cls.def(o.py, [op](TensorImpl* x, const Scalar& y) {
        Tensor t(x);
        return ops::binary_scalar(op(t), t, y, true);
      }, nb::is_operator());
    } else {
      cls.def(o.py, [op](TensorImpl* x, const Tensor& y) {
        Tensor t(x);
        return ops::binary(op(t), t, y);
      }, nb::is_operator());
      cls.def(o.py, [op](TensorImpl* x, const Scalar& y) {
        Tensor t(x);
        return ops::binary_scalar(op(t), t, y, false);
      }, nb::is_operator());
    }
  }
  for (const OpName& o : kInplace) {
    const ops::BinaryOp* op = &ops::binary_op(o.op);
    cls.def(o.py, [op](TensorImpl* x, const Tensor& y) { Tensor t(x); return ops::binary_(*op, t, y); },
            nb::is_operator());
    cls.def(o.py, [op](TensorImpl* x, const Scalar& y) {
      Tensor t(x);
      return ops::binary_(*op, t, ops::scalar_tensor(y, ops::result_type(t, y)));
    }, nb::is_operator());
  }
  cls.def("__neg__", [](TensorImpl* x) { return ops::neg(Tensor(x)); });
  cls.def("__abs__", [](TensorImpl* x) { return ops::abs(Tensor(x)); });
  cls.def("__invert__", [](TensorImpl* x) {
    Tensor t(x);
    return t.dtype() == DType::Bool ? ops::logical_not(t) : ops::unary("bitwise_not", t);
  });
  cls.def("__matmul__", [](TensorImpl* x, const Tensor& y) { return ops::matmul(Tensor(x), y); }, nb::is_operator());
  cls.def("__rmatmul__", [](TensorImpl* x, const Tensor& y) { return ops::matmul(y, Tensor(x)); }, nb::is_operator());

  for (const auto& [name, op_name, doc, doc_inplace] : kDeclaredUnary) {
    std::string op = op_name;
    m.def(name, [op](const Tensor& x, nb::handle) { return ops::unary(op, x); }, arg("x"), arg("name") = kNone, doc);
    cls.def(name, [op](TensorImpl* x, nb::handle) { return ops::unary(op, Tensor(x)); }, arg("name") = kNone, doc);
    if (!doc_inplace) continue;  // no in-place form (a bool or real result)
    std::string ip = std::string(name) + "_";
    auto inplace = [op](TensorImpl* x, nb::handle) -> Tensor { Tensor t(x); return ops::unary_(op, t); };
    cls.def(ip.c_str(), inplace, arg("name") = kNone, doc_inplace);
    m.def(ip.c_str(), inplace, arg("x"), arg("name") = kNone, doc_inplace);
  }

  // In-place copy and slice assignment (the other functions are declared in
  // src/ops/<family>.toml and bound by python/bind/<family>.cpp).
  cls.def("copy_", [](TensorImpl* x, const Tensor& src, bool) { Tensor t(x); return ops::copy_(t, src); },
          arg("src"), arg("blocking") = true);

  m.def("_setitem_slice", [](const Tensor& x, const Tensor& v, const Dims& axes, const Dims& starts, const Dims& ends,
                             const Dims& strides) {
    Tensor t = x;
    ops::slice_scatter_(t, v, axes, starts, ends, strides);
  });

  m.def("_linear", [](const Tensor& x, const Tensor& w, const Tensor& b) { return ops::linear(x, w, b); });

  // Autograd
  m.def("is_grad_enabled", &grad_enabled);
  m.def("set_grad_enabled", &set_grad_enabled);
  m.def("_backward", [](std::vector<Tensor> outs, std::vector<std::optional<Tensor>> grads, bool retain) {
    Tensors o(outs.begin(), outs.end()), g;
    for (auto& x : grads) g.push_back(x ? *x : Tensor());
    run_backward(o, g, retain, false);
  });
  m.def("_grad", [](std::vector<Tensor> outs, std::vector<Tensor> inputs, std::vector<std::optional<Tensor>> grads,
                    bool retain, bool create, bool allow_unused) {
    Tensors o(outs.begin(), outs.end()), in(inputs.begin(), inputs.end()), g;
    for (auto& x : grads) g.push_back(x ? *x : Tensor());
    Tensors r = run_backward(o, g, retain, create, in, allow_unused);
    std::vector<Tensor> res(r.begin(), r.end());
    return res;
  });

  // Runtime
  m.def("memory_allocated", []() { return device_interface(DeviceType::CPU).memory_stats(0).allocated; });
  m.def("max_memory_allocated", []() { return device_interface(DeviceType::CPU).memory_stats(0).max_allocated; });
  m.def("memory_reserved", []() { return device_interface(DeviceType::CPU).memory_stats(0).reserved; });
  m.def("reset_max_memory_allocated", []() { device_interface(DeviceType::CPU).reset_peak_stats(0); });
  m.def("empty_cache", []() { device_interface(DeviceType::CPU).empty_cache(0); });
  m.def("set_num_threads", [](int n) {
    OAR_CHECK(n >= 1, Value, "[oar.set_num_threads] expects a positive count, got ", n);
    omp_set_num_threads(n);
  }, docs::set_num_threads);
  m.def("get_num_threads", []() { return omp_get_max_threads(); }, docs::get_num_threads);
  // Which vectorised math code path runs ("avx512", "avx2", "portable"); tests
  // select each one the CPU supports.
  m.def("_vmath_isa", []() { return std::string(cpu::vmath::table().isa); });
  m.def("_select_vmath_isa", [](const std::string& name) { return cpu::vmath::select_isa(name.c_str()); });
  m.def("_registered_ops", []() {
    std::vector<std::string> names;
    for (OpDef* op : all_ops()) names.push_back(op->name);
    return names;
  });
  // The dtypes (names) that op `name` has a kernel for on device type `device`.
  m.def("_kernel_dtypes", [](const std::string& name, int device) {
    std::vector<std::string> dts;
    const OpDef* op = find_op(name);
    OAR_CHECK(op, Value, "[oar._kernel_dtypes] no op named '", name, "'");
    OAR_CHECK(device >= 0 && device < kNumDeviceTypes, Value, "[oar._kernel_dtypes] no device type ", device);
    for (int d = 0; d < kNumDTypes; ++d)
      if (op->kernels[device][d]) dts.push_back(dtype_name(DType(d)));
    return dts;
  });
}

Binder b(bind_ops);

}  // namespace
}  // namespace oar::bind
