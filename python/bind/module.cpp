// The extension module: error translation, Python reference hooks, and the
// binders registered by each binding file.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "autograd/autograd.h"
#include "common.h"
#include "ops/dispatch.h"

namespace oar::bind {

std::vector<std::pair<int, BindFn>>& binders() {
  static std::vector<std::pair<int, BindFn>> v;
  return v;
}

// Note [API error boundary]
// Errors of functions bound here go through oar._api.relabel (the Python side
// of the boundary, where the rule lives) so that each names the API called,
// also nanobind's own "incompatible function arguments". Each function
// object's vectorcall pointer is swapped for a trampoline that calls the
// original and, only when it fails, hands the exception to the hook: the hot
// path pays one indirect call. nanobind uses a handful of distinct vectorcall
// functions, so a small fixed table of trampolines covers them all.
namespace {

constexpr int kMaxVectorcalls = 16;
vectorcallfunc g_original[kMaxVectorcalls];
int g_num_original = 0;
PyObject* g_hook = nullptr;  // oar._api's relabel_bound(func, exc) -> exc or None

void relabel_error(PyObject* func) {
  if (!g_hook) return;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb && value) PyException_SetTraceback(value, tb);
  PyObject* repl = value ? PyObject_CallFunctionObjArgs(g_hook, func, value, nullptr) : nullptr;
  if (repl && PyExceptionInstance_Check(repl)) {
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(repl)), repl);
    Py_DECREF(repl);
    return;
  }
  if (!repl) PyErr_Clear();  // the hook itself failed: keep the original error
  Py_XDECREF(repl);
  PyErr_Restore(type, value, tb);
}

PyTypeObject* g_tensor_type = nullptr;  // oar.Tensor, once the module is built

// The device scope of a call (Note [device scope]): the device of its first
// argument tensor (or first element of a list or tuple argument) that is not
// on the CPU, else the CPU when it has a tensor argument; a call without
// tensor arguments keeps the scope it runs in.
struct ArgScope {
  bool open = false;
  uint32_t token = 0;
  ArgScope(PyObject* const* args, Py_ssize_t n) {
    if (!g_tensor_type) return;
    bool any = false;
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* a = args[i];
      if (PyList_Check(a) || PyTuple_Check(a)) {
        if (PySequence_Fast_GET_SIZE(a) == 0) continue;
        a = PySequence_Fast_GET_ITEM(a, 0);
      }
      if (!PyObject_TypeCheck(a, g_tensor_type)) continue;
      const TensorImpl* t = nb::inst_ptr<TensorImpl>(a);
      if (!t->storage) continue;
      const Device d = t->storage->device();
      if (d.type != DeviceType::CPU) {
        open = enter_device_scope_if_needed(d, &token);
        return;
      }
      any = true;
    }
    if (any) open = enter_device_scope_if_needed(Device{}, &token);
  }
  ~ArgScope() {
    if (open) exit_device_scope(token);
  }
};

// Constructors (__init__) get the trampoline without the scope: nanobind
// calls them with arguments that are not all objects yet.
template <int I, bool Scoped>
PyObject* trampoline(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kw) {
  std::optional<ArgScope> scope;
  if constexpr (Scoped) scope.emplace(args, PyVectorcall_NARGS(nargsf) + (kw ? PyTuple_GET_SIZE(kw) : 0));
  PyObject* r = g_original[I](self, args, nargsf, kw);
  if (!r) relabel_error(self);
  return r;
}

template <bool Scoped, int... I>
constexpr std::array<vectorcallfunc, sizeof...(I)> make_trampolines(std::integer_sequence<int, I...>) {
  return {&trampoline<I, Scoped>...};
}
constexpr auto kTrampolines = make_trampolines<true>(std::make_integer_sequence<int, kMaxVectorcalls>());
constexpr auto kPlainTrampolines = make_trampolines<false>(std::make_integer_sequence<int, kMaxVectorcalls>());

bool is_nb_function(PyObject* o) {
  std::string_view n = Py_TYPE(o)->tp_name;
  return n.ends_with("nb_func") || n.ends_with("nb_method");
}

void install_trampoline(PyObject* f, bool scoped) {
  Py_ssize_t off = Py_TYPE(f)->tp_vectorcall_offset;
  if (off <= 0) return;
  auto* slot = reinterpret_cast<vectorcallfunc*>(reinterpret_cast<char*>(f) + off);
  if (!*slot) return;
  const auto& table = scoped ? kTrampolines : kPlainTrampolines;
  for (int i = 0; i < g_num_original; ++i) {
    if (kTrampolines[size_t(i)] == *slot || kPlainTrampolines[size_t(i)] == *slot) return;  // already installed
    if (g_original[i] == *slot) { *slot = table[size_t(i)]; return; }
  }
  if (g_num_original == kMaxVectorcalls) return;  // unseen kind: left as it is
  g_original[g_num_original] = *slot;
  *slot = table[size_t(g_num_original++)];
}

bool is_submodule(PyObject* sub, PyObject* m) {
  const char* a = PyModule_GetName(sub);
  const char* b = PyModule_GetName(m);
  if (!a || !b) { PyErr_Clear(); return false; }
  size_t n = std::strlen(b);
  return std::strncmp(a, b, n) == 0 && a[n] == '.';
}

// Every function of the module, of its submodules (_nn_functional, ...) and
// every method of its classes.
// Functions whose tensor arguments are shapes or values, not data (full,
// rand, ...): their results go to the current device whatever their
// arguments' device, so they get no scope.
std::vector<std::string> g_unscoped;

void install_in(PyObject* m) {
  PyObject* d = PyModule_GetDict(m);
  PyObject *key, *val;
  Py_ssize_t pos = 0;
  while (PyDict_Next(d, &pos, &key, &val)) {
    if (is_nb_function(val)) {
      // The Python boundary's own scope calls must not run inside a scope of
      // their arguments: the token they return would be that scope's.
      const char* k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : nullptr;
      if (k && std::string_view(k).ends_with("_device_scope")) continue;
      install_trampoline(val, !(k && std::find(g_unscoped.begin(), g_unscoped.end(), k) != g_unscoped.end()));
    } else if (PyModule_Check(val) && is_submodule(val, m)) {
      install_in(val);
    } else if (PyType_Check(val)) {
      PyObject* td = reinterpret_cast<PyTypeObject*>(val)->tp_dict;
      PyObject *k2, *v2;
      Py_ssize_t p2 = 0;
      while (td && PyDict_Next(td, &p2, &k2, &v2)) {
        const char* k = PyUnicode_Check(k2) ? PyUnicode_AsUTF8(k2) : nullptr;
        if (is_nb_function(v2)) install_trampoline(v2, !(k && std::string_view(k) == "__init__"));
      }
    }
  }
}

void install_error_boundary(PyObject* m, nb::handle hook, std::vector<std::string> unscoped) {
  g_unscoped = std::move(unscoped);
  g_tensor_type = reinterpret_cast<PyTypeObject*>(PyObject_GetAttrString(m, "Tensor"));  // kept for good
  if (!g_tensor_type) PyErr_Clear();
  Py_XDECREF(g_hook);
  g_hook = hook.inc_ref().ptr();
  install_in(m);
}

}  // namespace

}  // namespace oar::bind

NB_MODULE(_C, m) {
  oar::py_ref_hooks().inc = [](void* o) { Py_INCREF(static_cast<PyObject*>(o)); };
  oar::py_ref_hooks().dec = [](void* o) { Py_DECREF(static_cast<PyObject*>(o)); };

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const oar::Error& e) {
      PyObject* type = PyExc_RuntimeError;
      switch (e.kind()) {
        case oar::ErrorKind::Value: type = PyExc_ValueError; break;
        case oar::ErrorKind::Index: type = PyExc_IndexError; break;
        case oar::ErrorKind::Type: type = PyExc_TypeError; break;
        case oar::ErrorKind::NotImplemented: type = PyExc_NotImplementedError; break;
        case oar::ErrorKind::Timeout: type = PyExc_TimeoutError; break;
        case oar::ErrorKind::Memory: type = PyExc_MemoryError; break;
        default: break;
      }
      PyErr_SetString(type, e.what());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(PyExc_MemoryError, "[oar] out of memory");
    } catch (const std::bad_variant_access&) {
      PyErr_SetString(PyExc_TypeError, "[oar] an op attribute has the wrong type");
    }
  });

  auto& bs = oar::bind::binders();
  std::stable_sort(bs.begin(), bs.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& b : bs) b.second(m);
  // Called once by oar/__init__.py with oar._api.relabel_bound.
  PyObject* mod = m.ptr();
  m.def("_install_error_boundary", [mod](nb::handle hook, std::vector<std::string> unscoped) {
    oar::bind::install_error_boundary(mod, hook, std::move(unscoped));
  });
}
