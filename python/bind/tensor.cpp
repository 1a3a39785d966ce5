// The Tensor class: metadata, NumPy and DLPack interop, autograd members.
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/pair.h>

#include "autograd/autograd.h"
#include "common.h"
#include "tensor/dist_attr.h"

namespace oar::bind {
namespace {

nb::dlpack::dtype dl_dtype(DType t) {
  using C = nb::dlpack::dtype_code;
  auto mk = [](C c, int bits) { return nb::dlpack::dtype{uint8_t(c), uint8_t(bits), 1}; };
  switch (t) {
    case DType::Bool: return mk(C::Bool, 8);
    case DType::UInt8: return mk(C::UInt, 8);
    case DType::Int8: return mk(C::Int, 8);
    case DType::Int16: return mk(C::Int, 16);
    case DType::Int32: return mk(C::Int, 32);
    case DType::Int64: return mk(C::Int, 64);
    case DType::Float16: return mk(C::Float, 16);
    case DType::BFloat16: return mk(C::Bfloat, 16);
    case DType::Float32: return mk(C::Float, 32);
    case DType::Float64: return mk(C::Float, 64);
    case DType::Complex64: return mk(C::Complex, 64);
    case DType::Complex128: return mk(C::Complex, 128);
  }
  return mk(C::Float, 32);
}

DType from_dl(nb::dlpack::dtype d, const char* api) {
  using C = nb::dlpack::dtype_code;
  C c = C(d.code);
  if (d.lanes == 1) {
    if (c == C::Bool) return DType::Bool;
    if (c == C::UInt && d.bits == 8) return DType::UInt8;
    if (c == C::Int) {
      if (d.bits == 8) return DType::Int8;
      if (d.bits == 16) return DType::Int16;
      if (d.bits == 32) return DType::Int32;
      if (d.bits == 64) return DType::Int64;
    }
    if (c == C::Float) {
      if (d.bits == 16) return DType::Float16;
      if (d.bits == 32) return DType::Float32;
      if (d.bits == 64) return DType::Float64;
    }
    if (c == C::Bfloat && d.bits == 16) return DType::BFloat16;
    if (c == C::Complex && d.bits == 64) return DType::Complex64;
    if (c == C::Complex && d.bits == 128) return DType::Complex128;
  }
  fail(ErrorKind::Type, "[", api, "] unsupported array dtype (code ", int(d.code), ", ", int(d.bits),
       " bits); expected bool, uint8, int8/16/32/64, float16/32/64, bfloat16 or complex64/128");
}

}  // namespace

// Wraps an ndarray's memory without copying; the array stays alive with the tensor. (Also
// used by getitem.cpp for NumPy indices and values.)
Tensor wrap_ndarray(const nb::ndarray<nb::ro>& a, const char* api) {
  OAR_CHECK(a.device_type() == nb::device::cpu::value, NotImplemented, "[", api,
            "] only CPU arrays can be imported in this build");
  DType dt = from_dl(a.dtype(), api);
  Dims shape, strides;
  int64_t lo = 0, hi = 0;
  for (size_t i = 0; i < a.ndim(); ++i) {
    shape.push_back(int64_t(a.shape(i)));
    strides.push_back(int64_t(a.stride(i)));
    if (a.shape(i) == 0) continue;
    int64_t ext = (int64_t(a.shape(i)) - 1) * int64_t(a.stride(i));
    (ext < 0 ? lo : hi) += ext;
  }
  bool empty = checked_numel(shape, api) == 0;
  // Point the storage at the lowest address the array touches.
  const char* base = static_cast<const char*>(a.data()) + lo * int64_t(itemsize(dt));
  size_t nbytes = empty ? 0 : size_t(hi - lo + 1) * itemsize(dt);
  auto* keep = new nb::object(nb::cast(a));
  auto storage = make_ref<Storage>(const_cast<char*>(base), nbytes, Device{}, [keep]() {
    nb::gil_scoped_acquire g;
    delete keep;
  });
  return Tensor(make_ref<TensorImpl>(std::move(storage), shape, strides, -lo, dt));
}

namespace {

nb::ndarray<nb::numpy> as_ndarray(const Tensor& t) {
  // A distributed tensor's array is this rank's piece (as in Paddle).
  if (t.is_dist()) return as_ndarray(t.impl()->dist->local);
  // NumPy reads host memory: a tensor on another device is copied here first.
  if (t.device().type != DeviceType::CPU) return as_ndarray(ops::to_device(t, Device{}));
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
  nb::object owner = nb::cast(t);
  return nb::ndarray<nb::numpy>(t.raw_data(), t.dim(), shape.data(), owner, strides.data(), dl_dtype(t.dtype()));
}

Tensor self_t(TensorImpl* p) { return Tensor(p); }

void bind_tensor(nb::module_& m) {
  nb::enum_<DType>(m, "dtype", R"(An element type: oar.bool, uint8, int8, int16, int32, int64, float16, bfloat16,
float32, float64, complex64, complex128 (they print with Paddle's names).

>>> import oar
>>> oar.float32.itemsize, oar.bfloat16.is_floating_point, oar.complex64.is_complex
(4, True, True)
)")
      .value("bool", DType::Bool).value("uint8", DType::UInt8).value("int8", DType::Int8)
      .value("int16", DType::Int16).value("int32", DType::Int32).value("int64", DType::Int64)
      .value("float16", DType::Float16).value("bfloat16", DType::BFloat16).value("float32", DType::Float32)
      .value("float64", DType::Float64).value("complex64", DType::Complex64).value("complex128", DType::Complex128)
      .def("__repr__", [](DType t) { return std::string("paddle.") + dtype_name(t); })
      .def("__str__", [](DType t) { return std::string("paddle.") + dtype_name(t); })
      .def_prop_ro("itemsize", [](DType t) { return itemsize(t); })
      .def_prop_ro("is_floating_point", [](DType t) { return is_floating(t); })
      .def_prop_ro("is_complex", [](DType t) { return is_complex(t); });
  m.def("dtype_from_name", [](const std::string& s) { return dtype_from_name(s, "oar.dtype"); });
  m.def("promote_types", &promote_types);
  m.def("get_default_dtype", []() { return default_float_dtype(); });
  m.def("set_default_dtype", [](DType t) {
    OAR_CHECK(is_floating(t), Type, "[oar.set_default_dtype] expects float16, bfloat16, float32 or float64, got ",
              dtype_name(t));
    set_default_float_dtype(t);
  });

  auto cls = nb::class_<TensorImpl>(
      m, "Tensor", R"(An n-dimensional array of one dtype on one device, with autograd: a tensor that does not
stop gradient records the ops that read it, and backward() fills the .grad of its leaves.
Make one with oar.to_tensor (or zeros, ones, arange, ...).

>>> import oar
>>> x = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]], stop_gradient=False)
>>> x.shape, x.dtype
([2, 2], paddle.float32)
>>> (x * x).sum().backward()
>>> x.grad.numpy().tolist()
[[2.0, 4.0], [6.0, 8.0]]
)",
      nb::intrusive_ptr<TensorImpl>([](TensorImpl* o, PyObject* po) noexcept { o->set_self_py(po); }),
      nb::dynamic_attr());
  cls.def_prop_ro("shape", [](TensorImpl* s) { return s->shape; })
      .def_prop_ro("ndim", [](TensorImpl* s) { return s->shape.size(); })
      .def("dim", [](TensorImpl* s) { return s->shape.size(); })
      .def_prop_ro("dtype", [](TensorImpl* s) { return s->dtype; })
      .def_prop_ro("size", [](TensorImpl* s) { return s->numel; })
      .def("numel", [](TensorImpl* s) { return s->numel; })
      .def("element_size", [](TensorImpl* s) { return itemsize(s->dtype); })
      .def_prop_ro("strides", [](TensorImpl* s) { return s->strides; })
      .def_prop_ro("_offset", [](TensorImpl* s) { return s->offset; })
      .def_prop_ro("_version", [](TensorImpl* s) { return s->storage->version(); })
      .def("data_ptr", [](TensorImpl* s) { return uintptr_t(self_t(s).raw_data()); })
      .def("_storage_ptr", [](TensorImpl* s) { return uintptr_t(s->storage->data()); })
      .def("is_contiguous", [](TensorImpl* s) { return s->contiguous; })
      .def("contiguous", [](TensorImpl* s) { return ops::contiguous(self_t(s)); })
      .def_prop_ro("_device", [](TensorImpl* s) { return s->storage->device().str(); })
      .def("numpy", [](TensorImpl* s) -> nb::object {
        Tensor t(s);
        if (t.dtype() == DType::BFloat16) {  // NumPy has no bfloat16: widen
          NoGradGuard ng;
          t = ops::cast(t, DType::Float32);
        }
        return nb::cast(as_ndarray(t));
      })
      .def("__dlpack__", [](TensorImpl* s, nb::kwargs kw) -> nb::object {
        Tensor t(s);
        // NumPy has no bfloat16: hand out a plain DLPack capsule for it. Otherwise let a
        // zero-copy NumPy view answer, so that the protocol's keywords (max_version,
        // dl_device, copy) are handled the way consumers expect.
        if (t.device().type != DeviceType::CPU) t = ops::to_device(t, Device{});
        if (t.dtype() == DType::BFloat16)
          return nb::cast(nb::ndarray<>(t.raw_data(), t.dim(),
              std::vector<size_t>(t.shape().begin(), t.shape().end()).data(), nb::cast(t),
              std::vector<int64_t>(t.strides().begin(), t.strides().end()).data(), dl_dtype(t.dtype())));
        nb::object arr = nb::cast(as_ndarray(t));
        return arr.attr("__dlpack__")(**kw);
      })
      .def("__dlpack_device__", [](TensorImpl*) { return std::make_pair(1, 0); })
      // autograd
      .def_prop_rw("stop_gradient", [](TensorImpl* s) { return !self_t(s).requires_grad(); },
                   [](TensorImpl* s, bool v) { self_t(s).autograd_meta().stop_gradient = v; })
      .def_prop_ro("is_leaf", [](TensorImpl* s) { return !s->autograd || !s->autograd->grad_fn; })
      .def_prop_ro("grad_fn", [](TensorImpl* s) -> nb::object {
        if (!s->autograd || !s->autograd->grad_fn) return nb::none();
        return nb::str(s->autograd->grad_fn->name().c_str());
      })
      .def_prop_rw("grad", [](TensorImpl* s) {
                     if (!s->autograd) return Tensor();
                     if (s->autograd->retained) return *s->autograd->retained;
                     AutogradMeta& m = *s->autograd;
                     if (m.grad_zeroed) {
                       NoGradGuard ng;
                       m.grad = ops::zeros_like(m.grad);
                       m.grad_zeroed = false;
                     }
                     return m.grad;
                   },
                   [](TensorImpl* s, std::optional<Tensor> g) {
                     if (g) OAR_CHECK(g->shape() == s->shape, Value, "[Tensor.grad] the gradient's shape ",
                                      ops::shape_str(g->shape()), " must equal the tensor's shape ",
                                      ops::shape_str(s->shape));
                     AutogradMeta& m = self_t(s).autograd_meta();
                     m.grad = g ? *g : Tensor();
                     m.grad_zeroed = false;
                   }, nb::arg("value").none())
      .def("_clear_grad", [](TensorImpl* s, bool set_to_zero) {
        if (!s->autograd || !s->autograd->grad.defined()) return;
        // Zeros are made only if .grad is read before the next backward.
        if (set_to_zero) s->autograd->grad_zeroed = true;
        else s->autograd->grad = Tensor();
      }, nb::arg("set_to_zero") = true)
      .def("detach", [](TensorImpl* s) { return detach(self_t(s)); })
      .def("detach_", [](TensorImpl* s) {
        if (s->autograd) { s->autograd->grad_fn.reset(); s->autograd->stop_gradient = true; }
        return self_t(s);
      })
      .def("retain_grads", [](TensorImpl* s) {
        Tensor t(s);
        OAR_CHECK(t.requires_grad(), Runtime, "[Tensor.retain_grads] the tensor does not require grad");
        AutogradMeta& am = t.autograd_meta();
        if (!am.grad_fn || am.retain_grad) return;
        am.retain_grad = true;
        // The node shares a slot with the tensor instead of holding the tensor,
        // which would be a cycle (tensor -> grad_fn -> hook -> tensor).
        auto slot = std::make_shared<Tensor>();
        am.retained = slot;
        am.grad_fn->pre_hooks.emplace_back(am.output_nr, [slot](const Tensor& g) {
          *slot = slot->defined() ? ops::add(*slot, g) : detach(g);
          return Tensor();
        });
      })
      .def("_register_hook", [](TensorImpl* s, nb::callable fn) {
        Tensor t(s);
        OAR_CHECK(t.requires_grad(), Runtime,
                  "[Tensor.register_hook] cannot register a hook on a tensor that stops gradient");
        Hook h = [fn](const Tensor& g) -> Tensor {
          nb::object r = fn(g);
          if (r.is_none()) return Tensor();
          return nb::cast<Tensor>(r);
        };
        AutogradMeta& am = t.autograd_meta();
        if (am.grad_fn) am.grad_fn->pre_hooks.emplace_back(am.output_nr, std::move(h));
        else am.hooks.push_back(std::move(h));
      })
      .def("_register_post_accumulate_hook", [](TensorImpl* s, nb::callable fn) {
        Tensor t(s);
        OAR_CHECK(t.requires_grad() && !t.autograd_meta().grad_fn, Runtime,
                  "[Tensor._register_post_accumulate_hook] needs a leaf tensor that requires grad");
        t.autograd_meta().post_hooks.push_back([fn] { fn(); });
      });
  m.def("_queue_backward_callback", [](nb::callable fn) { queue_backward_callback([fn] { fn(); }); });

  m.def("from_numpy", [](nb::ndarray<nb::ro> a) { return wrap_ndarray(a, "oar.to_tensor"); },
        "Wraps an array without copying.");
  m.def("from_dlpack", [](nb::ndarray<nb::ro> a) { return wrap_ndarray(a, "oar.from_dlpack"); });
}

Binder b(bind_tensor, 0);

}  // namespace
}  // namespace oar::bind
