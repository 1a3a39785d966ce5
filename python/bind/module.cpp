// The extension module: error translation, Python reference hooks, and the
// binders registered by each binding file.
#include <algorithm>

#include "autograd/autograd.h"
#include "common.h"

namespace oar::bind {

std::vector<std::pair<int, BindFn>>& binders() {
  static std::vector<std::pair<int, BindFn>> v;
  return v;
}

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
}
