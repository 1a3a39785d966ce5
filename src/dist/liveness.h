// Liveness of the ranks of a job, so that a collective waiting on a peer that
// has died (or already finished) fails within a second instead of hanging
// until its deadline.
//
// Rank 0 listens on a TCP port; every other rank keeps one connection to it.
// The operating system closes a process's sockets however it ends (SIGKILL
// included), so rank 0 sees a peer vanish as end-of-file, and tells the
// others. A rank that shuts down cleanly says so first ("finished", not
// "died"). If rank 0 itself vanishes, every other rank sees its connection
// close. Plain sockets, no MPI: MPI offers no way to learn that a peer died.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace oar::dist {

enum class PeerState : uint8_t { Alive = 0, Finished = 1, Died = 2 };

class Liveness {
 public:
  ~Liveness();
  // Rank 0: opens the listening socket and returns "ip,ip,...:port" for the
  // others (all of this host's IPv4 addresses, loopback last).
  std::string listen(int size);
  // Other ranks: connects to one of rank 0's addresses.
  void connect(const std::string& address, int rank, int size);
  PeerState state(int rank) const;
  // Says "finished" to the others and stops the monitor thread.
  void shutdown();

 private:
  void serve();   // rank 0
  void follow();  // others
  void set_state(int rank, PeerState s);

  int rank_ = 0;
  int listen_fd_ = -1;
  int conn_fd_ = -1;        // others: the connection to rank 0
  int wake_[2] = {-1, -1};  // self-pipe that stops the monitor thread
  std::unique_ptr<std::atomic<uint8_t>[]> states_;
  int size_ = 0;
  std::thread thread_;
};

}  // namespace oar::dist
