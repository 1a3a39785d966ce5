// The ProcessGroup of plugin devices, over the collective entries of the
// plugin's table (include/oar/device_ext.h). It is made as NCCL's is
// (nccl_group.cpp): rank 0 of the CPU group asks the plugin for a unique id,
// the CPU group broadcasts it, and every rank calls comm_init_rank with it.
//
// Note [plugin collectives]: each call is queued on the device's current
// stream and the group then synchronises that stream, so a collective has
// finished (or failed, with the plugin's status and message) when its Work is
// returned. That gives up overlapping communication with computation, and in
// exchange the group needs no thread of its own and a failure is reported by
// the call that caused it. Deadlines are the plugin's to keep: a plugin whose
// collective waits forever for a lost peer hangs the caller, as its
// synchronize_stream would.
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "device/plugin.h"
#include "dist/process_group.h"
#include "ops/op.h"

namespace oar::dist {
namespace {

// The ABI's element type for t and how many of them t holds (complex numbers
// travel as pairs of reals, as with NCCL: fine for the sums and averages they
// allow; booleans as bytes).
std::pair<OAR_DataType, size_t> abi_type(const Tensor& t) {
  const size_t n = size_t(t.numel());
  switch (t.dtype()) {
    case DType::Bool: return {OAR_DTYPE_UINT8, n};
    case DType::Complex64: return {OAR_DTYPE_FLOAT32, 2 * n};
    case DType::Complex128: return {OAR_DTYPE_FLOAT64, 2 * n};
    default: return {OAR_DataType(int(t.dtype())), n};  // numbered as in oar (device_ext.h)
  }
}

OAR_ReduceOp abi_op(const char* api, ReduceOp op, DType t) {
  switch (bytewise_reduce_op(api, op, t, "on plugin devices")) {
    case ReduceOp::Sum: return OAR_REDUCE_SUM;
    case ReduceOp::Max: return OAR_REDUCE_MAX;
    case ReduceOp::Min: return OAR_REDUCE_MIN;
    case ReduceOp::Prod: return OAR_REDUCE_PROD;
    case ReduceOp::Avg: return OAR_REDUCE_AVG;
  }
  return OAR_REDUCE_SUM;
}

WorkPtr done_work() {
  auto w = std::make_shared<Work>();
  w->complete();
  return w;
}

class PluginGroup final : public ProcessGroup {
 public:
  PluginGroup(const ProcessGroupPtr& cpu, Device device, const OAR_DeviceInterface* table)
      : device_(device), t_(*table) {
    rank_ = cpu->rank();
    ranks_ = cpu->ranks();
    timeout_s_ = cpu->timeout_seconds();
    if (rank_ < 0) return;  // not a member: no communicator (calls raise)
    OAR_UniqueId id;
    std::memset(&id, 0, sizeof id);
    if (rank_ == 0) check(t_.get_unique_id(&id), "oar.distributed", "get_unique_id");
    if (size() > 1) {
      Tensor buf = empty_tensor({int64_t(sizeof id)}, DType::UInt8, Device{});
      std::memcpy(buf.raw_data(), &id, sizeof id);
      cpu->broadcast(buf, 0)->wait();
      std::memcpy(&id, buf.raw_data(), sizeof id);
    }
    check(t_.comm_init_rank(device_.index, size(), &id, rank_, &comm_), "oar.distributed", "comm_init_rank");
  }

  ~PluginGroup() override {
    if (comm_) t_.comm_destroy(comm_);
  }

  WorkPtr all_reduce(const Tensor& t, ReduceOp op) override {
    const char* api = "oar.distributed.all_reduce";
    OAR_ReduceOp o = abi_op(api, op, t.dtype());
    auto [ty, n] = abi_type(t);
    return run(api, "all_reduce", t_.all_reduce, {t}, [&, o, ty = ty, n = n](OAR_Stream s) {
      return t_.all_reduce(t.raw_data(), t.raw_data(), n, ty, o, comm_, s);
    });
  }

  WorkPtr all_gather(const Tensor& out, const Tensor& in) override {
    const char* api = "oar.distributed.all_gather";
    auto [ty, n] = abi_type(in);
    check_blocks(api, out, in);
    return run(api, "all_gather", t_.all_gather, {out, in}, [&, ty = ty, n = n](OAR_Stream s) {
      return t_.all_gather(in.raw_data(), out.raw_data(), n, ty, comm_, s);
    });
  }

  WorkPtr reduce_scatter(const Tensor& out, const Tensor& in, ReduceOp op) override {
    const char* api = "oar.distributed.reduce_scatter";
    OAR_ReduceOp o = abi_op(api, op, in.dtype());
    auto [ty, n] = abi_type(out);
    check_blocks(api, in, out);
    return run(api, "reduce_scatter", t_.reduce_scatter, {out, in}, [&, o, ty = ty, n = n](OAR_Stream s) {
      return t_.reduce_scatter(in.raw_data(), out.raw_data(), n, ty, o, comm_, s);
    });
  }

  WorkPtr reduce(const Tensor& t, int root, ReduceOp op) override {
    const char* api = "oar.distributed.reduce";
    OAR_ReduceOp o = abi_op(api, op, t.dtype());
    auto [ty, n] = abi_type(t);
    check_rank(api, root, "root");
    return run(api, "reduce", t_.reduce, {t}, [&, o, ty = ty, n = n](OAR_Stream s) {
      return t_.reduce(t.raw_data(), t.raw_data(), n, ty, o, root, comm_, s);
    });
  }

  WorkPtr broadcast(const Tensor& t, int root) override {
    const char* api = "oar.distributed.broadcast";
    auto [ty, n] = abi_type(t);
    check_rank(api, root, "root");
    return run(api, "broadcast", t_.broadcast, {t}, [&, ty = ty, n = n](OAR_Stream s) {
      return t_.broadcast(t.raw_data(), t.raw_data(), n, ty, root, comm_, s);
    });
  }

  // Scatter and gather are the root's broadcast and all_gather restricted
  // to blocks: built from all_gather and broadcast so that a plugin needs
  // only the entries the ABI names.
  WorkPtr scatter(const Tensor& out, const Tensor& in, int root) override {
    const char* api = "oar.distributed.scatter";
    check_rank(api, root, "root");
    Tensor whole = empty_tensor({out.numel() * size()}, out.dtype(), device_);
    if (rank_ == root) {
      check_blocks(api, in, out);
      copy_bytes(whole, in, 0, size_t(in.numel()) * in.itemsize());
    }
    broadcast(whole, root)->wait();
    const size_t bytes = size_t(out.numel()) * out.itemsize();
    copy_bytes(out, whole, size_t(rank_) * bytes, bytes);
    return done_work();
  }

  WorkPtr gather(const Tensor& out, const Tensor& in, int root) override {
    const char* api = "oar.distributed.gather";
    check_rank(api, root, "root");
    if (rank_ == root) check_blocks(api, out, in);
    Tensor whole = rank_ == root ? out : empty_tensor({in.numel() * size()}, in.dtype(), device_);
    return all_gather(whole, in);
  }

  WorkPtr alltoall(const Tensor& out, const Tensor& in, const std::vector<int64_t>& out_counts,
                   const std::vector<int64_t>& in_counts) override {
    const char* api = "oar.distributed.alltoall";
    OAR_CHECK(out_counts.empty() && in_counts.empty(), NotImplemented, "[", api, "] uneven split sizes are not "
              "supported on ", device_.str(), "; split into equal blocks");
    OAR_CHECK(out.dtype() == in.dtype() && out.numel() == in.numel() && in.numel() % size() == 0, Value, "[", api,
              "] expects input and output tensors of one dtype and size, in ", size(), " equal blocks");
    auto [ty, n] = abi_type(in);
    return run(api, "all_to_all", t_.all_to_all, {out, in}, [&, ty = ty, n = n](OAR_Stream s) {
      return t_.all_to_all(in.raw_data(), out.raw_data(), n / size_t(size()), ty, comm_, s);
    });
  }

  WorkPtr send(const Tensor& t, int dst) override {
    const char* api = "oar.distributed.send";
    auto [ty, n] = abi_type(t);
    check_peer(api, dst, "dst");
    return run(api, "send", t_.send, {t}, [&, ty = ty, n = n](OAR_Stream s) {
      return t_.send(t.raw_data(), n, ty, dst, comm_, s);
    });
  }

  WorkPtr recv(const Tensor& t, int src) override {
    const char* api = "oar.distributed.recv";
    auto [ty, n] = abi_type(t);
    check_peer(api, src, "src");
    return run(api, "recv", t_.recv, {t}, [&, ty = ty, n = n](OAR_Stream s) {
      return t_.recv(t.raw_data(), n, ty, src, comm_, s);
    });
  }

  WorkPtr barrier() override {
    Tensor one = empty_tensor({1}, DType::Float32, device_);
    return all_reduce(one, ReduceOp::Sum);
  }

 private:
  // Queues `call` on the device's current stream and waits for it (Note
  // [plugin collectives]). `entry` is the table entry it uses: a null one
  // raises NotImplementedError.
  template <class Entry>
  WorkPtr run(const char* api, const char* entry_name, Entry entry, const Tensors& tensors,
              const std::function<OAR_Status(OAR_Stream)>& call) {
    OAR_CHECK(rank_ >= 0, Value, "[", api, "] this rank is not a member of the group ", ranks_str());
    OAR_CHECK(entry != nullptr, NotImplemented, "[", api, "] the plugin of ", device_.str(), " has no ", entry_name,
              " entry");
    for (const Tensor& t : tensors)
      OAR_CHECK(t.device() == device_ && t.is_contiguous(), Value, "[", api, "] the group of ", device_.str(),
                " takes contiguous tensors on that device, got one on ", t.device().str());
    auto s = static_cast<OAR_Stream>(current_stream(device_));
    check(call(s), api, entry_name);
    if (t_.synchronize_stream)
      check(t_.synchronize_stream(device_.index, s), api, "synchronize_stream");
    else
      check(t_.synchronize_device(device_.index), api, "synchronize_device");
    return done_work();
  }

  void check(OAR_Status s, const char* api, const char* entry) const {
    if (s == OAR_SUCCESS) return;
    const char* m = t_.get_last_error_message ? t_.get_last_error_message() : nullptr;
    fail(plugin_error_kind(s), "[", api, "] ", entry, " of ", device_.str(), " on the ranks ", ranks_str(),
         " failed: ", m && *m ? m : plugin_status_name(s));
  }

  void copy_bytes(const Tensor& dst, const Tensor& src, size_t src_offset, size_t bytes) const {
    check(t_.memcpy_d2d(device_.index, dst.raw_data(), static_cast<const char*>(src.raw_data()) + src_offset, bytes),
          "oar.distributed", "memcpy_d2d");
  }

  void check_rank(const char* api, int r, const char* what) const {
    OAR_CHECK(r >= 0 && r < size(), Value, "[", api, "] ", what, " must be a rank of the group (0 to ", size() - 1,
              "), got ", r);
  }
  void check_peer(const char* api, int r, const char* what) const {
    check_rank(api, r, what);
    OAR_CHECK(r != rank_, Value, "[", api, "] ", what, " must be another rank than this one (", r, ")");
  }
  // `whole` holds size() blocks of `block`'s numel, of the same dtype.
  void check_blocks(const char* api, const Tensor& whole, const Tensor& block) const {
    OAR_CHECK(whole.defined() && whole.dtype() == block.dtype() && whole.numel() == block.numel() * size(), Value,
              "[", api, "] expected a tensor of ", size(), " x ", block.numel(), " ", dtype_name(block.dtype()),
              " elements, got ", whole.defined() ? std::to_string(whole.numel()) : std::string("none"));
  }
  std::string ranks_str() const {
    std::ostringstream o;
    o << "[";
    for (size_t i = 0; i < ranks_.size(); ++i) o << (i ? ", " : "") << ranks_[i];
    o << "]";
    return o.str();
  }

  Device device_;
  const OAR_DeviceInterface& t_;
  OAR_Comm comm_ = nullptr;
};

ProcessGroupPtr make_plugin_group(const ProcessGroupPtr& cpu, Device device) {
  const OAR_DeviceInterface* table = plugin_table(device.type);
  OAR_CHECK(table && table->get_unique_id && table->comm_init_rank && table->comm_destroy && table->all_reduce,
            NotImplemented, "[oar.distributed] collectives on ", device.str(), " tensors need the collective "
            "entries of its plugin (get_unique_id, comm_init_rank, comm_destroy, all_reduce, ...), which it does "
            "not provide");
  return std::make_shared<PluginGroup>(cpu, device, table);
}

// Every plugin slot: a plugin's type is known only once it is loaded, and one
// without collectives is refused by make_plugin_group, naming its device.
const bool kRegistered = [] {
  for (int t = int(DeviceType::Custom); t < kNumDeviceTypes; ++t)
    register_device_group_factory(DeviceType(t), make_plugin_group);
  return true;
}();

}  // namespace
}  // namespace oar::dist
