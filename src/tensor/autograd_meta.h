// What the core knows of autograd: the per-tensor autograd state, the
// thread-local grad mode and detach. The engine that records nodes and runs
// the backward pass lives in autograd/ (library oar_autograd) and plugs into
// dispatch stage 5 (ops/dispatch.h), so the core and the inference runtime
// link without it.
#pragma once
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "tensor/tensor.h"

namespace oar {

struct Node;  // autograd/autograd.h
using Hook = std::function<Tensor(const Tensor&)>;  // returns a replacement grad or undefined

struct AutogradMeta {
  bool stop_gradient = true;
  std::shared_ptr<Node> grad_fn;  // null for a leaf
  int output_nr = 0;
  Tensor grad;
  // Set by clear_grad(set_to_zero=True): .grad reads as zeros, and the next
  // accumulation replaces it instead of adding to a buffer of zeros.
  bool grad_zeroed = false;
  std::weak_ptr<Node> grad_accumulator;  // leaves only, created on demand
  SmallVector<Hook, 1> hooks;            // leaves: run before accumulation
  // Leaves: run after Tensor.backward has updated .grad (data parallel starts
  // a bucket's all-reduce from here, while the backward pass goes on).
  SmallVector<std::function<void()>, 1> post_hooks;
  bool retain_grad = false;              // non-leaves: keep .grad
  std::shared_ptr<Tensor> retained;      // where a non-leaf's retained grad lands
  std::string name;
};

// Grad mode (thread-local).
bool grad_enabled();
void set_grad_enabled(bool on);
struct NoGradGuard {
  bool prev;
  NoGradGuard() : prev(grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(prev); }
};
struct GradModeGuard {
  bool prev;
  explicit GradModeGuard(bool on) : prev(grad_enabled()) { set_grad_enabled(on); }
  ~GradModeGuard() { set_grad_enabled(prev); }
};

// A tensor sharing data with `t` but with no autograd history.
Tensor detach(const Tensor& t);
bool any_requires_grad(std::span<const Tensor> ts);
// Raises if an in-place op would overwrite a leaf that requires grad.
void check_inplace(const Tensor& self, const char* op);

}  // namespace oar
