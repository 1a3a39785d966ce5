// Process groups: the collectives of oar.distributed over an existing engine
// (OpenMPI for CPU tensors). Callers see only this interface; the MPI headers
// stay inside mpi_group.cpp.
//
// Note [collective progress]: every collective is started as a nonblocking
// operation by one communication thread per process, in the order the caller
// issued them (MPI requires the same order on every rank), and the thread
// polls the in-flight requests. That is what gives each collective a deadline
// (blocking MPI calls cannot time out) and lets data parallel overlap its
// gradient all-reduces with the backward pass. A request that misses its
// deadline, or whose group loses a peer (see liveness.h), fails its Work with
// an error naming the collective, its sequence number and the group's ranks;
// the group is then broken (MPI cannot cancel a collective) and every later
// call on it fails at once.
#pragma once
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/error.h"
#include "tensor/tensor.h"

namespace oar::dist {

enum class ReduceOp { Sum, Max, Min, Prod, Avg };

// The handle of one collective: wait() blocks until it finished and rethrows
// its failure.
class Work {
 public:
  void wait();
  bool is_completed();
  // Called by the communication thread.
  void complete();
  void fail(ErrorKind kind, std::string message);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int state_ = 0;  // 0 pending, 1 done, 2 failed
  ErrorKind kind_ = ErrorKind::Runtime;
  std::string message_;
};
using WorkPtr = std::shared_ptr<Work>;

// Tensors passed to collectives are contiguous CPU tensors (the Python layer
// copies others); results are written into them in place. Ranks given to a
// group (root, src, dst) are ranks within the group.
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  int rank() const { return rank_; }  // -1 when this process is not a member
  int size() const { return int(ranks_.size()); }
  const std::vector<int>& ranks() const { return ranks_; }  // global ranks
  double timeout_seconds() const { return timeout_s_; }
  void set_timeout(double seconds) { timeout_s_ = seconds; }

  virtual WorkPtr all_reduce(const Tensor& t, ReduceOp op) = 0;
  // out holds size() blocks of in's numel, in group-rank order.
  virtual WorkPtr all_gather(const Tensor& out, const Tensor& in) = 0;
  // in holds size() blocks of out's numel; block r is reduced into rank r.
  virtual WorkPtr reduce_scatter(const Tensor& out, const Tensor& in, ReduceOp op) = 0;
  virtual WorkPtr reduce(const Tensor& t, int root, ReduceOp op) = 0;
  virtual WorkPtr broadcast(const Tensor& t, int root) = 0;
  // in (read on root only) holds size() blocks of out's numel.
  virtual WorkPtr scatter(const Tensor& out, const Tensor& in, int root) = 0;
  // out (written on root only) holds size() blocks of in's numel.
  virtual WorkPtr gather(const Tensor& out, const Tensor& in, int root) = 0;
  // Block sizes in elements, one per rank (empty: equal blocks).
  virtual WorkPtr alltoall(const Tensor& out, const Tensor& in, const std::vector<int64_t>& out_counts,
                           const std::vector<int64_t>& in_counts) = 0;
  virtual WorkPtr send(const Tensor& t, int dst) = 0;
  virtual WorkPtr recv(const Tensor& t, int src) = 0;
  virtual WorkPtr barrier() = 0;

 protected:
  int rank_ = -1;
  std::vector<int> ranks_;
  double timeout_s_ = 600.0;
};
using ProcessGroupPtr = std::shared_ptr<ProcessGroup>;

// The MPI world. init() is idempotent; it starts the communication thread,
// initialises MPI there and connects the liveness monitor. Throws when oar
// was built without MPI.
struct WorldInfo {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
};
WorldInfo init_world(double timeout_s);
bool world_initialized();
// This process's place in the job (rank 0 of 1 before init_world).
WorldInfo world_info();
ProcessGroupPtr world_group();
// A sub-group over the given global ranks (every rank of the world calls it,
// as in Paddle; non-members get a group with rank() == -1).
ProcessGroupPtr new_group(const std::vector<int>& ranks, double timeout_s);
// Finalises MPI if every collective finished cleanly; after a failure the
// process exits without finalising (MPI would wait for the lost peer).
void shutdown_world();
// Drops the tensors that finished collectives held. Collective calls do it
// as they go; call it before the interpreter exits (tensors may need it).
void release_finished();
bool built_with_mpi();

// Groups for tensors on another device type (NCCL for CUDA), over the ranks of
// a CPU group that bootstraps them. A device library registers its factory
// when it is loaded; make_device_group raises when none is registered.
using DeviceGroupFactory = ProcessGroupPtr (*)(const ProcessGroupPtr& cpu_group, Device device);
void register_device_group_factory(DeviceType type, DeviceGroupFactory factory);
ProcessGroupPtr make_device_group(const ProcessGroupPtr& cpu_group, Device device);
// What happened to a global rank the liveness monitor lost: "died", "shut down"
// or nullptr while it is alive (or without a monitor).
const char* peer_lost(int global_rank);

// Shared by the backends: the group of a one-process job (collectives are
// local copies) and whether an MPI launcher started this process.
ProcessGroupPtr make_self_group(double timeout_s);
// Raises (as `api`) unless `op` is defined for dtype `t`.
void check_reduce(const char* api, ReduceOp op, DType t);
// For backends that reduce booleans as bytes and complex values as pairs of
// reals (NCCL, plugin devices): check_reduce, PROD of complex refused (`where`
// completes "is not supported ..."), and the op to run: a boolean SUM is MAX
// (any) and PROD is MIN (all), which cannot wrap around.
ReduceOp bytewise_reduce_op(const char* api, ReduceOp op, DType t, const char* where);
bool launched_by_mpi();

}  // namespace oar::dist
