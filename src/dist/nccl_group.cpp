// The NCCL backend of ProcessGroup, for tensors on CUDA devices. Part of
// liboar_cuda.so (built when the CUDA toolkit and NCCL are found); loading
// that library registers it as the device group factory for CUDA.
//
// Note [NCCL progress]
// A group is created lazily, the first time a collective sees a CUDA tensor
// of a CPU group (oar.distributed's Group): rank 0 makes the NCCL id and the
// CPU group broadcasts it. The communicator is nonblocking (NCCL's config
// `blocking = 0`), so that neither its creation nor an enqueue can hang the
// caller: each call is followed by polling ncclCommGetAsyncError against the
// group's deadline. Collectives run on a stream of the group that first waits
// for the work already queued on the device's default stream (Note [CUDA
// streams]); the default stream then waits for the collective, so later work
// sees its results. A watcher thread completes each collective's Work when
// its event has fired, and fails it — aborting the communicator, which
// cannot be used afterwards — when NCCL reports an error, when the liveness
// monitor has lost a rank of the group, or when the deadline passes. Errors
// name the collective, its sequence number and the group's ranks, as the MPI
// backend's do. Tensors a collective holds are dropped by the next call on a
// caller thread (their Python owners need the GIL), as in mpi_group.cpp.
#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "device/cuda/cuda_check.h"
#include "dist/process_group.h"
#include "ops/op.h"

namespace oar::dist {
namespace {

using Clock = std::chrono::steady_clock;

// NCCL's element type for t, and how many of them t holds (complex numbers
// travel as pairs of reals: fine for the sums and averages they allow).
std::pair<ncclDataType_t, size_t> nccl_type(const char* api, const Tensor& t) {
  const size_t n = size_t(t.numel());
  switch (t.dtype()) {
    case DType::Bool:
    case DType::UInt8: return {ncclUint8, n};
    case DType::Int8: return {ncclInt8, n};
    case DType::Int32: return {ncclInt32, n};
    case DType::Int64: return {ncclInt64, n};
    case DType::Float16: return {ncclFloat16, n};
    case DType::BFloat16: return {ncclBfloat16, n};
    case DType::Float32: return {ncclFloat32, n};
    case DType::Float64: return {ncclFloat64, n};
    case DType::Complex64: return {ncclFloat32, 2 * n};
    case DType::Complex128: return {ncclFloat64, 2 * n};
    default:
      fail(ErrorKind::Type, "[", api, "] NCCL has no ", dtype_name(t.dtype()), " type; cast the tensor (e.g. to "
           "int32) first");
  }
}

ncclRedOp_t nccl_op(const char* api, ReduceOp op, DType t) {
  switch (bytewise_reduce_op(api, op, t, "by the NCCL backend")) {
    case ReduceOp::Sum: return ncclSum;
    case ReduceOp::Max: return ncclMax;
    case ReduceOp::Min: return ncclMin;
    case ReduceOp::Prod: return ncclProd;
    case ReduceOp::Avg: return ncclAvg;
  }
  return ncclSum;
}

class NcclGroup final : public ProcessGroup, public std::enable_shared_from_this<NcclGroup> {
 public:
  NcclGroup(const ProcessGroupPtr& cpu, Device device) : device_(device.index) {
    rank_ = cpu->rank();
    ranks_ = cpu->ranks();
    timeout_s_ = cpu->timeout_seconds();
    if (rank_ < 0) return;  // not a member: no communicator (calls raise)
    const char* api = "oar.distributed";
    ncclUniqueId id;
    std::memset(&id, 0, sizeof id);
    if (rank_ == 0) nccl_check(ncclGetUniqueId(&id), api, "ncclGetUniqueId");
    if (size() > 1) {
      Tensor buf = empty_tensor({int64_t(sizeof id)}, DType::UInt8, Device{});
      std::memcpy(buf.raw_data(), &id, sizeof id);
      cpu->broadcast(buf, 0)->wait();
      std::memcpy(&id, buf.raw_data(), sizeof id);
    }
    DeviceGuard guard(device_);
    try {
      cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), api, "cudaStreamCreate");
      cuda_check(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), api, "cudaEventCreate");
      cuda_check(cudaMalloc(&scratch_, 16), api, "cudaMalloc");
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      config.blocking = 0;
      const Clock::time_point deadline = deadline_from_now();
      ncclResult_t r = ncclCommInitRankConfig(&comm_, size(), id, rank_, &config);
      std::lock_guard<std::mutex> ck(comm_mu_);
      settle(r, "creating the NCCL communicator", deadline);
    } catch (...) {
      release_cuda();  // the destructor does not run for a failed constructor
      throw;
    }
    watcher_ = std::thread([this] { watch(); });
  }

  ~NcclGroup() override {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (watcher_.joinable()) watcher_.join();
    if (rank_ < 0) return;
    DeviceGuard guard(device_);
    close_comm();
    for (Pending& p : pending_) {
      cudaEventDestroy(p.done);
      p.work->fail(ErrorKind::Runtime, "[" + p.name + "] the group " + ranks_str() + " was destroyed first");
    }
    release_cuda();
  }

  WorkPtr all_reduce(const Tensor& t, ReduceOp op) override {
    const char* api = "oar.distributed.all_reduce";
    ncclRedOp_t o = nccl_op(api, op, t.dtype());
    auto [ty, n] = nccl_type(api, t);
    return run(api, {t}, [&, o, ty = ty, n = n](cudaStream_t s) {
      return ncclAllReduce(t.raw_data(), t.raw_data(), n, ty, o, comm_, s);
    });
  }

  WorkPtr all_gather(const Tensor& out, const Tensor& in) override {
    const char* api = "oar.distributed.all_gather";
    auto [ty, n] = nccl_type(api, in);
    check_blocks(api, out, in);
    return run(api, {out, in}, [&, ty = ty, n = n](cudaStream_t s) {
      return ncclAllGather(in.raw_data(), out.raw_data(), n, ty, comm_, s);
    });
  }

  WorkPtr reduce_scatter(const Tensor& out, const Tensor& in, ReduceOp op) override {
    const char* api = "oar.distributed.reduce_scatter";
    ncclRedOp_t o = nccl_op(api, op, in.dtype());
    auto [ty, n] = nccl_type(api, out);
    check_blocks(api, in, out);
    return run(api, {out, in}, [&, o, ty = ty, n = n](cudaStream_t s) {
      return ncclReduceScatter(in.raw_data(), out.raw_data(), n, ty, o, comm_, s);
    });
  }

  WorkPtr reduce(const Tensor& t, int root, ReduceOp op) override {
    const char* api = "oar.distributed.reduce";
    ncclRedOp_t o = nccl_op(api, op, t.dtype());
    auto [ty, n] = nccl_type(api, t);
    check_rank(api, root, "root");
    return run(api, {t}, [&, o, ty = ty, n = n](cudaStream_t s) {
      return ncclReduce(t.raw_data(), t.raw_data(), n, ty, o, root, comm_, s);
    });
  }

  WorkPtr broadcast(const Tensor& t, int root) override {
    const char* api = "oar.distributed.broadcast";
    auto [ty, n] = nccl_type(api, t);
    check_rank(api, root, "root");
    return run(api, {t}, [&, ty = ty, n = n](cudaStream_t s) {
      return ncclBroadcast(t.raw_data(), t.raw_data(), n, ty, root, comm_, s);
    });
  }

  WorkPtr scatter(const Tensor& out, const Tensor& in, int root) override {
    return rooted("oar.distributed.scatter", in, out, root, false);
  }

  WorkPtr gather(const Tensor& out, const Tensor& in, int root) override {
    return rooted("oar.distributed.gather", out, in, root, true);
  }

  WorkPtr alltoall(const Tensor& out, const Tensor& in, const std::vector<int64_t>& out_counts,
                   const std::vector<int64_t>& in_counts) override {
    const char* api = "oar.distributed.alltoall";
    OAR_CHECK(out.dtype() == in.dtype(), Type, "[", api, "] input and output dtypes differ: ",
              dtype_name(in.dtype()), " and ", dtype_name(out.dtype()));
    auto counts = [&](const std::vector<int64_t>& c, const Tensor& t, const char* what) {
      std::vector<int64_t> r = c;
      if (r.empty()) {
        OAR_CHECK(t.numel() % size() == 0, Value, "[", api, "] the ", what, " tensor's ", t.numel(),
                  " elements do not split into ", size(), " equal blocks");
        r.assign(size_t(size()), t.numel() / size());
      }
      int64_t total = 0;
      for (int64_t v : r) total += v;
      OAR_CHECK(int(r.size()) == size() && total == t.numel(), Value, "[", api, "] the ", what, " split sizes must "
                "be ", size(), " counts summing to ", t.numel());
      return r;
    };
    std::vector<int64_t> oc = counts(out_counts, out, "output"), ic = counts(in_counts, in, "input");
    const ncclDataType_t ty = nccl_type(api, in).first;
    const size_t per = is_complex(in.dtype()) ? 2 : 1;  // NCCL elements per tensor element
    const size_t item = in.itemsize() / per;
    return run(api, {out, in}, [&, ty, oc, ic, per, item](cudaStream_t s) {
      ncclResult_t r = ncclGroupStart();
      if (r != ncclSuccess) return r;
      size_t so = 0, si = 0;
      for (int p = 0; p < size() && r == ncclSuccess; ++p) {
        const size_t ni = size_t(ic[size_t(p)]) * per, no = size_t(oc[size_t(p)]) * per;
        if (ni) r = ncclSend(static_cast<const char*>(in.raw_data()) + si * item, ni, ty, p, comm_, s);
        if (r == ncclSuccess && no) r = ncclRecv(static_cast<char*>(out.raw_data()) + so * item, no, ty, p, comm_, s);
        si += ni;
        so += no;
      }
      ncclResult_t e = ncclGroupEnd();
      return r != ncclSuccess ? r : e;
    });
  }

  WorkPtr send(const Tensor& t, int dst) override {
    const char* api = "oar.distributed.send";
    auto [ty, n] = nccl_type(api, t);
    check_peer(api, dst, "dst");
    return run(api, {t}, [&, ty = ty, n = n](cudaStream_t s) { return ncclSend(t.raw_data(), n, ty, dst, comm_, s); });
  }

  WorkPtr recv(const Tensor& t, int src) override {
    const char* api = "oar.distributed.recv";
    auto [ty, n] = nccl_type(api, t);
    check_peer(api, src, "src");
    return run(api, {t}, [&, ty = ty, n = n](cudaStream_t s) { return ncclRecv(t.raw_data(), n, ty, src, comm_, s); });
  }

  WorkPtr barrier() override {
    return run("oar.distributed.barrier", {}, [&](cudaStream_t s) {
      return ncclAllReduce(scratch_, scratch_, 1, ncclFloat32, ncclSum, comm_, s);
    });
  }

 private:
  struct Pending {
    WorkPtr work;
    cudaEvent_t done = nullptr;
    Tensors keep;
    Clock::time_point deadline;
    std::string name;
    uint64_t seq = 0;
  };

  void check_member(const char* api) const {
    OAR_CHECK(rank_ >= 0, Value, "[", api, "] this rank is not a member of the group ", ranks_str());
  }
  void check_rank(const char* api, int r, const char* what) const {
    OAR_CHECK(r >= 0 && r < size(), Value, "[", api, "] ", what, " must be a rank of the group (0 to ", size() - 1,
              "), got ", r);
  }
  void check_peer(const char* api, int r, const char* what) const {
    check_rank(api, r, what);
    OAR_CHECK(r != rank_, Value, "[", api, "] ", what, " must be another rank than this one (", r, ")");
  }
  // Scatter (the root's `whole` to every rank's `mine`) and gather (every
  // `mine` into the root's `whole`) as grouped point-to-point calls; the
  // root's own block is a device copy on the same stream.
  WorkPtr rooted(const char* api, const Tensor& whole, const Tensor& mine, int root, bool gather) {
    auto [ty, n] = nccl_type(api, mine);
    check_rank(api, root, "root");
    if (rank_ == root) check_blocks(api, whole, mine);
    const size_t bytes = size_t(mine.numel()) * mine.itemsize();
    return run(api, {whole, mine}, [&, ty = ty, n = n, bytes](cudaStream_t s) {
      ncclResult_t r = ncclGroupStart();
      if (r != ncclSuccess) return r;
      if (rank_ != root) {
        r = gather ? ncclSend(mine.raw_data(), n, ty, root, comm_, s) : ncclRecv(mine.raw_data(), n, ty, root, comm_, s);
      }
      for (int p = 0; rank_ == root && p < size() && r == ncclSuccess; ++p) {
        char* block = static_cast<char*>(whole.raw_data()) + size_t(p) * bytes;
        if (p == root) {
          cudaError_t e = gather ? cudaMemcpyAsync(block, mine.raw_data(), bytes, cudaMemcpyDeviceToDevice, s)
                                 : cudaMemcpyAsync(mine.raw_data(), block, bytes, cudaMemcpyDeviceToDevice, s);
          if (e != cudaSuccess) r = ncclUnhandledCudaError;
        } else {
          r = gather ? ncclRecv(block, n, ty, p, comm_, s) : ncclSend(block, n, ty, p, comm_, s);
        }
      }
      ncclResult_t e = ncclGroupEnd();
      return r != ncclSuccess ? r : e;
    });
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

  Clock::time_point deadline_from_now() const {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s_));
  }

  static void nccl_check(ncclResult_t r, const char* api, const char* what) {
    OAR_CHECK(r == ncclSuccess, Runtime, "[", api, "] ", what, " failed: ", ncclGetErrorString(r));
  }

  // Waits out ncclInProgress (nonblocking communicator) until `deadline`,
  // a lost rank or an error; then aborts the communicator and raises.
  // Callers hold comm_mu_.
  void settle(ncclResult_t r, const char* what, Clock::time_point deadline) {
    ErrorKind kind = ErrorKind::Runtime;
    std::string why;
    while (r == ncclInProgress && why.empty()) {
      if (Clock::now() > deadline) {
        kind = ErrorKind::Timeout;
        why = "it did not finish within " + std::to_string(timeout_s_) + " s (a rank may be missing)";
      } else if (std::string lost = lost_member(); !lost.empty()) {
        why = lost;
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        if (ncclCommGetAsyncError(comm_, &r) != ncclSuccess) r = ncclInternalError;
      }
    }
    if (why.empty() && r == ncclSuccess) return;
    if (why.empty()) why = std::string("NCCL error: ") + ncclGetErrorString(r);
    const std::string msg = std::string(what) + ": " + why;
    mark_broken(msg);
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
    fail(kind, "[oar.distributed] ", what, " on the ranks ", ranks_str(), " (NCCL, gpu:", device_, ") failed: ", why,
         "; the group is aborted");
  }

  // Once set, nothing completes: the watcher fails every pending collective,
  // whose events may fire only because the abort ended their kernels.
  void mark_broken(const std::string& why) {
    {
      std::lock_guard<std::mutex> wk(why_mu_);
      if (broken_why_.empty()) broken_why_ = why;
    }
    broken_ = true;
    cv_.notify_all();
  }
  std::string broken_why() {
    std::lock_guard<std::mutex> wk(why_mu_);
    return broken_why_;
  }

  // Destroys the communicator: finalize (collective with the group's other
  // ranks) within the deadline, else abort.
  void close_comm() {
    std::lock_guard<std::mutex> ck(comm_mu_);
    if (!comm_) return;
    bool clean = !broken_ && pending_.empty();
    if (clean) {
      const Clock::time_point deadline = deadline_from_now();
      ncclResult_t r = ncclCommFinalize(comm_);
      while (r == ncclInProgress && Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        if (ncclCommGetAsyncError(comm_, &r) != ncclSuccess) r = ncclInternalError;
      }
      clean = r == ncclSuccess;
    }
    clean ? ncclCommDestroy(comm_) : ncclCommAbort(comm_);
    comm_ = nullptr;
  }

  void release_cuda() {
    if (scratch_) cudaFree(scratch_);
    if (ready_) cudaEventDestroy(ready_);
    if (stream_) cudaStreamDestroy(stream_);
    scratch_ = nullptr;
    ready_ = nullptr;
    stream_ = nullptr;
  }

  WorkPtr run(const char* api, Tensors keep, const std::function<ncclResult_t(cudaStream_t)>& enqueue) {
    check_member(api);
    const Device mine{DeviceType::CUDA, int16_t(device_)};
    for (const Tensor& t : keep)
      if (t.defined())
        OAR_CHECK(t.device() == mine && t.is_contiguous(), Value, "[", api,
                  "] the NCCL group of gpu:", device_, " takes contiguous tensors on that device, got one on ",
                  t.device().str());
    release_retired();
    OAR_CHECK(!broken_.load(), Runtime, "[", api, "] the group ", ranks_str(), " was aborted by an earlier failure "
              "(", broken_why(), "); create a new group");
    DeviceGuard guard(device_);
    // Start after what the default stream already holds (Note [CUDA streams]).
    cuda_check(cudaEventRecord(ready_, cudaStreamLegacy), api, "cudaEventRecord");
    cuda_check(cudaStreamWaitEvent(stream_, ready_, 0), api, "cudaStreamWaitEvent");
    const Clock::time_point deadline = deadline_from_now();
    const uint64_t seq = ++seq_;
    Pending p;
    p.work = std::make_shared<Work>();
    p.keep = std::move(keep);
    p.deadline = deadline;
    p.name = api;
    p.seq = seq;
    // The event exists before anything is enqueued, so that an enqueued
    // collective always has its Pending entry (which keeps its tensors).
    cuda_check(cudaEventCreateWithFlags(&p.done, cudaEventDisableTiming), api, "cudaEventCreate");
    WorkPtr w = p.work;
    // Lock order: mu_ may be held while taking comm_mu_ (the watcher), never
    // the reverse. An entry pushed after an abort is failed by the watcher.
    std::exception_ptr failed;
    cudaError_t e = cudaSuccess;
    {
      std::lock_guard<std::mutex> ck(comm_mu_);
      if (!comm_) {
        cudaEventDestroy(p.done);
        fail(ErrorKind::Runtime, "[", api, "] the group ", ranks_str(), " was aborted by an earlier failure (",
             broken_why(), "); create a new group");
      }
      std::string what = std::string("enqueuing ") + api + " #" + std::to_string(seq);
      try {
        settle(enqueue(stream_), what.c_str(), deadline);
      } catch (...) {
        // Kernels may have been issued before the failure: the entry keeps
        // the tensors until the watcher fails it (the group is broken).
        failed = std::current_exception();
      }
      e = cudaEventRecord(p.done, stream_);
      if (e == cudaSuccess && !failed) e = cudaStreamWaitEvent(cudaStreamLegacy, p.done, 0);
    }
    if (e != cudaSuccess && !failed) mark_broken(std::string("CUDA error: ") + cudaGetErrorString(e));
    {
      std::lock_guard<std::mutex> lk(mu_);
      pending_.push_back(std::move(p));
    }
    cv_.notify_all();
    if (failed) std::rethrow_exception(failed);
    return w;
  }

  // The watcher thread (Note [NCCL progress]).
  void watch() {
    cudaSetDevice(device_);
    std::unique_lock<std::mutex> lk(mu_);
    while (!stop_) {
      if (pending_.empty()) {
        cv_.wait(lk, [&] { return stop_ || !pending_.empty(); });
        continue;
      }
      if (broken_) {
        const std::string why = broken_why();
        abort_comm();
        while (!pending_.empty()) finish(lk, ErrorKind::Runtime, why);
        continue;
      }
      Pending& p = pending_.front();
      cudaError_t q = cudaEventQuery(p.done);
      if (q == cudaSuccess) {
        finish(lk, ErrorKind::Runtime, "");
        continue;
      }
      std::string why;
      ErrorKind kind = ErrorKind::Runtime;
      ncclResult_t async = ncclSuccess;
      if (q != cudaErrorNotReady) {
        why = std::string("CUDA error: ") + cudaGetErrorString(q);
      } else if (comm_error(&async)) {
        why = std::string("NCCL error: ") + ncclGetErrorString(async);
      } else if (std::string lost = lost_member(); !lost.empty()) {
        why = lost;
      } else if (Clock::now() > p.deadline) {
        kind = ErrorKind::Timeout;
        why = "it did not finish within " + std::to_string(timeout_s_) + " s";
      }
      if (why.empty()) {
        cv_.wait_for(lk, std::chrono::microseconds(200), [&] { return stop_; });
        continue;
      }
      // The communicator cannot recover: abort it, which also ends every
      // collective queued after this one.
      mark_broken(p.name + " #" + std::to_string(p.seq) + ": " + why);
      abort_comm();
      while (!pending_.empty()) finish(lk, kind, why);
    }
  }

  // Completes (message empty) or fails the oldest pending collective; its
  // tensors wait in `retired_` for a caller thread.
  void finish(std::unique_lock<std::mutex>& /*held*/, ErrorKind kind, const std::string& why) {
    Pending p = std::move(pending_.front());
    pending_.erase(pending_.begin());
    cudaEventDestroy(p.done);
    {
      std::lock_guard<std::mutex> rk(retired_mu_);
      for (Tensor& t : p.keep) retired_.push_back(std::move(t));
    }
    if (why.empty()) {
      p.work->complete();
    } else {
      p.work->fail(kind, "[" + p.name + "] collective #" + std::to_string(p.seq) + " on the ranks " + ranks_str() +
                             " (NCCL, gpu:" + std::to_string(device_) + ") failed: " + why +
                             "; the group is aborted");
    }
  }

  // An error NCCL reports asynchronously (a peer's failure, a network error).
  // A caller enqueueing holds the communicator; the next poll asks again.
  bool comm_error(ncclResult_t* r) {
    std::unique_lock<std::mutex> ck(comm_mu_, std::try_to_lock);
    if (!ck.owns_lock() || !comm_) return false;
    return ncclCommGetAsyncError(comm_, r) == ncclSuccess && *r != ncclSuccess && *r != ncclInProgress;
  }

  void abort_comm() {
    std::lock_guard<std::mutex> ck(comm_mu_);
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
  }

  std::string lost_member() const {
    for (int r : ranks_)
      if (const char* s = peer_lost(r)) return "rank " + std::to_string(r) + " " + s;
    return {};
  }

  void release_retired() {
    std::vector<Tensor> drop;
    {
      std::lock_guard<std::mutex> rk(retired_mu_);
      drop.swap(retired_);
    }
  }

  int device_ = 0;
  std::mutex comm_mu_;  // guards comm_: enqueues, error queries and the abort
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ready_ = nullptr;
  void* scratch_ = nullptr;
  uint64_t seq_ = 0;
  std::atomic<bool> broken_{false};
  std::mutex why_mu_;
  std::string broken_why_;  // guarded by why_mu_
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<Pending> pending_;
  std::mutex retired_mu_;
  std::vector<Tensor> retired_;
  std::thread watcher_;
};

ProcessGroupPtr make_nccl_group(const ProcessGroupPtr& cpu, Device device) {
  return std::make_shared<NcclGroup>(cpu, device);
}

const bool kRegistered = [] {
  register_device_group_factory(DeviceType::CUDA, make_nccl_group);
  return true;
}();

}  // namespace
}  // namespace oar::dist
