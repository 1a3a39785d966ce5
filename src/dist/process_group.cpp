#include "dist/process_group.h"

#include <cstdlib>
#include <cstring>

namespace oar::dist {

void Work::wait() {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return state_ != 0; });
  if (state_ == 2) throw Error(kind_, message_);
}

bool Work::is_completed() {
  std::lock_guard<std::mutex> lk(mu_);
  return state_ != 0;
}

void Work::complete() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    state_ = 1;
  }
  cv_.notify_all();
}

void Work::fail(ErrorKind kind, std::string message) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    state_ = 2;
    kind_ = kind;
    message_ = std::move(message);
  }
  cv_.notify_all();
}

}  // namespace oar::dist

namespace oar::dist {
namespace {

WorkPtr done() {
  auto w = std::make_shared<Work>();
  w->complete();
  return w;
}

void copy_into(const Tensor& dst, const Tensor& src, const char* api) {
  OAR_CHECK(dst.defined() && src.defined() && dst.dtype() == src.dtype() && dst.numel() == src.numel() &&
                dst.is_contiguous() && src.is_contiguous(),
            Value, "[", api, "] expected contiguous input and output of the same dtype and size");
  if (dst.raw_data() != src.raw_data())
    std::memmove(dst.raw_data(), src.raw_data(), size_t(src.numel()) * src.itemsize());
}

void check_peer(int peer, const char* api) {
  OAR_CHECK(peer == 0, Value, "[", api, "] the peer rank must be in [0, 1) within the group, got ", peer);
}

// The group of a job of one process: every collective is a local copy (or
// nothing), so a script written for N ranks runs unchanged on one, without
// starting MPI.
class SelfGroup final : public ProcessGroup {
 public:
  explicit SelfGroup(double timeout_s) {
    ranks_ = {0};
    rank_ = 0;
    timeout_s_ = timeout_s;
  }
  WorkPtr all_reduce(const Tensor& t, ReduceOp op) override {
    check_reduce("oar.distributed.all_reduce", op, t.dtype());
    return done();
  }
  WorkPtr all_gather(const Tensor& out, const Tensor& in) override {
    copy_into(out, in, "oar.distributed.all_gather");
    return done();
  }
  WorkPtr reduce_scatter(const Tensor& out, const Tensor& in, ReduceOp op) override {
    check_reduce("oar.distributed.reduce_scatter", op, in.dtype());
    copy_into(out, in, "oar.distributed.reduce_scatter");
    return done();
  }
  WorkPtr reduce(const Tensor& t, int root, ReduceOp op) override {
    check_peer(root, "oar.distributed.reduce");
    check_reduce("oar.distributed.reduce", op, t.dtype());
    return done();
  }
  WorkPtr broadcast(const Tensor&, int root) override {
    check_peer(root, "oar.distributed.broadcast");
    return done();
  }
  WorkPtr scatter(const Tensor& out, const Tensor& in, int root) override {
    check_peer(root, "oar.distributed.scatter");
    copy_into(out, in, "oar.distributed.scatter");
    return done();
  }
  WorkPtr gather(const Tensor& out, const Tensor& in, int root) override {
    check_peer(root, "oar.distributed.gather");
    copy_into(out, in, "oar.distributed.gather");
    return done();
  }
  WorkPtr alltoall(const Tensor& out, const Tensor& in, const std::vector<int64_t>&,
                   const std::vector<int64_t>&) override {
    copy_into(out, in, "oar.distributed.alltoall");
    return done();
  }
  WorkPtr send(const Tensor&, int dst) override {
    check_peer(dst, "oar.distributed.send");
    fail(ErrorKind::Value, "[oar.distributed.send] a job of one process has no peer to send to");
  }
  WorkPtr recv(const Tensor&, int src) override {
    check_peer(src, "oar.distributed.recv");
    fail(ErrorKind::Value, "[oar.distributed.recv] a job of one process has no peer to receive from");
  }
  WorkPtr barrier() override { return done(); }
};

}  // namespace

void check_reduce(const char* api, ReduceOp op, DType t) {
  static const char* names[] = {"SUM", "MAX", "MIN", "PROD", "AVG"};
  OAR_CHECK(!is_complex(t) || op == ReduceOp::Sum || op == ReduceOp::Prod || op == ReduceOp::Avg, Type, "[", api,
            "] ReduceOp.", names[int(op)], " is not defined for complex tensors, got ", dtype_name(t));
  OAR_CHECK(op != ReduceOp::Avg || is_inexact(t), Type, "[", api,
            "] ReduceOp.AVG needs a floating-point or complex tensor, got ", dtype_name(t));
}

ReduceOp bytewise_reduce_op(const char* api, ReduceOp op, DType t, const char* where) {
  check_reduce(api, op, t);
  OAR_CHECK(!is_complex(t) || op != ReduceOp::Prod, NotImplemented, "[", api, "] ReduceOp.PROD of complex "
            "tensors is not supported ", where);
  if (t == DType::Bool && op == ReduceOp::Sum) return ReduceOp::Max;
  if (t == DType::Bool && op == ReduceOp::Prod) return ReduceOp::Min;
  return op;
}

namespace {
DeviceGroupFactory g_device_group_factories[kNumDeviceTypes] = {};
}  // namespace

void register_device_group_factory(DeviceType type, DeviceGroupFactory factory) {
  g_device_group_factories[int(type)] = factory;
}

ProcessGroupPtr make_device_group(const ProcessGroupPtr& cpu_group, Device device) {
  DeviceGroupFactory f = g_device_group_factories[int(device.type)];
  OAR_CHECK(f, NotImplemented, "[oar.distributed] collectives on ", device.str(), " tensors need ",
            device.type == DeviceType::CUDA ? "the NCCL backend, which this build does not have" :
            "a collective backend for that device, which this build does not have");
  return f(cpu_group, device);
}

ProcessGroupPtr make_self_group(double timeout_s) { return std::make_shared<SelfGroup>(timeout_s); }

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

}  // namespace oar::dist
